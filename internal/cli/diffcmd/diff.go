// Package diffcmd is `regctl diff`: a manifest against what is stored, as
// kubectl diff (writes.Diff), or two points in time (changes.Print).
package diffcmd

import (
	"context"
	"errors"

	"github.com/spf13/cobra"
	kubectldiff "k8s.io/kubectl/pkg/cmd/diff"
	"k8s.io/utils/exec"

	"github.com/regctl/regctl/internal/changes"
	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/target"
	"github.com/regctl/regctl/internal/writes"
)

// Options are the options of `regctl diff`. A diff writes nothing: it has
// none of the write commands' options.
type Options struct {
	*cli.Globals
	target.Scope
	// Filenames and Recursive are the manifest of diff -f (-f, -R).
	Filenames []string
	Recursive bool
	Diff      writes.DiffOptions
	// From and To are the two points in time of a diff without -f.
	From, To string
	Args     []string
	Selector string
	Patch    bool
	// Output is the format of a diff --from's report; output, as -o
	// gives it.
	Output render.Format
	output string
}

// New is the `regctl diff` command; runF, when set, runs instead of
// Options.Run (cli.WithOptions).
func New(g *cli.Globals, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Globals: g}
	cmd := &cobra.Command{
		Use:   "diff -f FILE|- [-n NAMESPACE] | diff --from SOURCE [--to SOURCE] [TYPE[,TYPE...]] [-n NAMESPACE] [-l SELECTOR] [-o table|yaml|json] [--patch]",
		Short: "Diff what a manifest would change, or what changed between two points in time",
		Long: `With -f, diff the objects stored now against what applying the manifest would store, as
kubectl diff does, without a running kube-apiserver: on a sandbox (--data-dir), a restored
backup, or a cluster whose apiserver is down.

kubectl's own diff runs against kube-apiserver's own request handlers, which regctl serves
in-process on the stores of the map: kubectl reads the manifest (-f FILE, DIR, -R, or - for
standard input), gets each object, and sends as a dry run what kubectl apply would send. By
default that is client-side apply's: a three-way strategic merge patch of the manifest with
the object's kubectl.kubernetes.io/last-applied-configuration, computed by kubectl's patcher
(a JSON merge patch for custom resources). With --server-side it is a server-side apply, as
--field-manager (kubectl's default, kubectl) with --force-conflicts to take fields others
own. The server's patch and apply handlers merge it with the stored object, and its field
managers, strategies and validation decide what would be stored; an object not stored is
created as a dry run. The two sides are written as YAML to two directories named as kubectl
names them ([group.]version.Kind.namespace.name), and compared with diff -u -N or the program
$KUBECTL_EXTERNAL_DIFF names. metadata.managedFields is left out unless --show-managed-fields,
and a Secret's data is masked unless --show-secrets. Nothing is written.

With --from, compare what etcd held at two points in time: every object added, removed,
recreated (deleted and created again, another uid) or changed, each read through its store
at its own point, as the server would have served it there. A source is live (the etcd the
flags name, as it is now; the default for --to), rev:TIME (rev:2026-11-29T14:00:00Z, or an
age, rev:90m: that etcd at the last revision written by then, as get --revision tells a
time), rev:N (that etcd at revision N, until it is compacted) or an etcd snapshot file. For each changed object the report names the fields
that changed (as inspect --history names them) and, from metadata.managedFields on the --to
side, the manager that owns each and when it last wrote. A resource stored only on one side
(its CRD added or removed) or at another storage version is said so: each side's custom
resources are read through the CRDs it holds (at rev:N, the CRDs as they were then). rev:N
is a revision of --etcd-servers: a resource kept on another etcd (--etcd-servers-overrides)
is compared only when both sides are live, and is said not compared otherwise. Every stored resource
is compared unless TYPE names some, in every namespace unless -n names one. Both sides are
read in key order, a page at a time, and merged as they come. --patch prints a unified diff
of each object that differs instead of the report.

Exit status, as kubectl diff's: 0 when nothing would change (or changed), 1 when something
would (or did), more than 1 on error (with -f, an object that cannot be read or merged:
nothing is then diffed; with --from, an object one side cannot read, listed in the report).`,
		Example: `  # What applying the manifest would change: exit 0 when nothing would, 1 when something
  # would, and the diff
  regctl diff -f pods.yaml

  # As a server-side apply would merge it
  regctl diff -f pods.yaml --server-side

  # With another diff program, as kubectl diff takes it
  KUBECTL_EXTERNAL_DIFF="diff -u -i" regctl diff -f pods.yaml

  # What changed in the shop namespace in the last hour, and who changed it
  regctl diff --from rev:1h -n shop   # exits 1 when anything did

  # Since 14:00 UTC on 28 November, or since revision 2
  regctl diff --from rev:2026-11-28T14:00:00Z -n shop   # exits 1 when anything changed
  regctl diff --from rev:2 -n shop   # exits 1 when anything changed

  # Config maps only, as a patch (--from backup.db compares a snapshot file)
  regctl diff --from rev:2 configmaps -n shop --patch   # exits 1 when anything changed`,
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cli.Trouble(err) })
	fs := cmd.Flags()
	cli.AddFilenameFlags(fs, &opts.Filenames, &opts.Recursive, "The manifest to diff")
	fs.StringVarP(&opts.Namespace, "namespace", "n", "default", "Namespace for objects that do not name one")
	fs.BoolVar(&opts.Diff.ShowManagedFields, "show-managed-fields", false, "Include metadata.managedFields in the diff")
	fs.BoolVar(&opts.Diff.ShowSecrets, "show-secrets", false, "Do not mask the values of Secrets")
	fs.BoolVar(&opts.Diff.ServerSide, "server-side", false, "With -f: merge as server-side apply does, as kubectl diff --server-side")
	fs.BoolVar(&opts.Diff.ForceConflicts, "force-conflicts", false, "With --server-side: take the fields other managers own")
	fs.StringVar(&opts.Diff.FieldManager, "field-manager", "", "With -f: the manager the merge is made as; kubectl's default (kubectl-client-side-apply, or kubectl with --server-side) when empty")
	fs.StringVar(&opts.From, "from", "", "Compare what etcd held at this point (live, rev:TIME as rev:2026-11-29T14:00:00Z or rev:90m, rev:N, or a snapshot file) ...")
	fs.StringVar(&opts.To, "to", "live", "... with what it held at this one")
	fs.StringVarP(&opts.Selector, "selector", "l", "", "With --from: compare only the objects with these labels")
	fs.BoolVarP(&opts.AllNamespaces, "all-namespaces", "A", false, "With --from: compare every namespace (the default unless -n)")
	fs.BoolVar(&opts.Patch, "patch", false, "With --from: print a unified diff of each object that differs instead of the report")
	fs.StringVarP(&opts.output, "output", "o", string(render.Table), "With --from: the report's format, table|yaml|json")
	cli.CompleteNamespaces(cmd, g)
	return cli.WithOptions(cmd, opts, runF)
}

// Complete and Validate fail as kubectl diff fails on trouble: exit 2.
func (o *Options) Complete(cmd *cobra.Command, args []string) (err error) {
	o.NamespaceSet = cmd.Flags().Changed("namespace")
	o.Args = args
	o.Output, err = render.ParseFormat(o.output, changes.Formats...)
	return cli.TroubleOf(err)
}

func (o *Options) Validate() error { return cli.TroubleOf(o.validate()) }

func (o *Options) validate() error {
	switch {
	case o.From == "" && len(o.Filenames) == 0:
		return errors.New("`-f` names no manifest, and `--from` no point in time: give one of them")
	case o.From != "" && len(o.Filenames) > 0:
		return errors.New("`-f` and `--from` both given: diff a manifest, or two points in time")
	case o.From == "" && len(o.Args) > 0:
		return errors.New("TYPE arguments go with `--from`; a manifest names its own objects")
	case o.From != "" && o.RevisionGiven():
		return errors.New("`--revision` and `--from`: name the revisions with rev:N or rev:TIME")
	case o.RevisionGiven():
		return errors.New("`--revision` and `-f`: diff -f compares a manifest with the objects stored now, at etcd's current revision; to compare other points in time, name them with `--from` and `--to` (rev:N, rev:TIME)")
	case o.AllNamespaces && o.NamespaceSet:
		return cli.ErrNamespaceAndAll
	case o.Diff.ForceConflicts && !o.Diff.ServerSide:
		return errors.New("--force-conflicts only works with --server-side")
	case o.From != "" && (o.Diff.ServerSide || o.Diff.FieldManager != ""):
		return errors.New("`--server-side` and `--field-manager` say how a manifest merges: they go with `-f`")
	case o.From != "":
		for _, side := range []string{o.From, o.To} {
			if _, err := changes.ParseSource(side); err != nil {
				return err
			}
		}
		return nil
	}
	return cli.CheckFieldManager(o.Diff.FieldManager)
}

// Run diffs two points in time with --from, else a manifest.
func (o *Options) Run(ctx context.Context) error {
	if o.From != "" {
		return o.overTime(ctx)
	}
	return diffExit(o.manifest(ctx))
}

// manifest diffs the manifest -f names (writes.Diff) on the map of the
// user's etcd, built once the manifest is read, as a read's: a diff writes
// nothing.
func (o *Options) manifest(ctx context.Context) error {
	ctx = render.WithWarnings(ctx, o.IO.ErrOut)
	d := o.Diff
	d.Program = &kubectldiff.DiffProgram{Exec: exec.New(), IOStreams: o.IO}
	live := cli.NewLiveMaps(o.Globals, o.Scope, false)
	defer live.Close()
	return writes.Diff(ctx, writes.Manifest{
		Filenames: o.Filenames, Recursive: o.Recursive, In: o.IO.In, Out: o.IO.Out, ErrOut: o.IO.ErrOut,
		Scope: writes.Scope{Namespace: o.Namespace, Explicit: o.NamespaceSet},
		Maps:  live,
	}, d)
}

// diffExit is kubectl diff's exit status for err: the diff program's own
// when it is 0 or 1 (1: the objects differ, and the diff said so), more
// than 1 with a line on trouble.
func diffExit(err error) error {
	var exit exec.ExitError
	if errors.As(err, &exit) && exit.ExitStatus() <= 1 {
		return cli.DiffStatus(exit.ExitStatus() == 1, nil)
	}
	return cli.DiffStatus(false, err)
}
