// Package restorecmd is `regctl restore`: objects brought back from a
// snapshot or an earlier revision (restore.Run).
package restorecmd

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/regctl/regctl/internal/changes"
	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/cli/pointintime"
	"github.com/regctl/regctl/internal/completion"
	"github.com/regctl/regctl/internal/gctune"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/restore"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/target"
)

// Options are the options of `regctl restore`.
type Options struct {
	*cli.Globals
	target.Scope
	From string
	// FromEncryption is the source's --encryption-provider-config, when
	// its keys are not today's.
	FromEncryption string
	Args           []string
	Selector       string
	DryRun         bool
	Overwrite      bool
	Output         render.Format
	output         string
}

var formats = []render.Format{render.Table, render.JSON, render.YAML}

// New is the `regctl restore` command; runF, when set, runs instead of
// Options.Run (cli.WithOptions).
func New(g *cli.Globals, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Globals: g}
	cmd := &cobra.Command{
		Use:   "restore --from SOURCE [TYPE[,TYPE...] | TYPE/NAME ...] [-n NAMESPACE | -A] [-l SELECTOR] [--dry-run] [--overwrite] [-o json|yaml]",
		Short: "Bring objects back from a snapshot or an earlier revision, exactly as they were stored",
		Long: `Bring back a namespace, a type or single objects from an etcd snapshot file or an
earlier revision of the etcd (rev:TIME or rev:N), exactly as they were stored: each object
keeps its uid, creationTimestamp, generation, labels, annotations, finalizers, ownerReferences,
metadata.managedFields and status, so that what names it (an ownerReference, a controller
that remembers it) finds it again. It gets a new resourceVersion, and is written through
today's store of its resource: at today's storage version, encrypted with today's first
key (--encryption-provider-config), under its key only where that key is free (etcd checks
it in the transaction that writes it: a concurrent create wins, and is reported).

The source is read as ` + "`regctl diff --from`" + ` reads it, with its own CRDs: rev:TIME
(rev:2026-11-29T14:00:00Z, or an age, rev:90m) is the last revision written by then, told
by the Leases' clocks as get --revision tells a time, and named on stderr. Its values are
decrypted with --from-encryption-provider-config when the backup's keys are not today's.
-n NAMESPACE with no TYPE restores the namespace object and every namespaced resource in it,
custom resources included; TYPE (as get takes it) restores those types in -n NAMESPACE (the
default namespace unless given), or with -A in every namespace.

Namespaces are written first, then CRDs (their custom resources are written once the CRDs
serve them), then the rest, owners before the objects that name them. Nothing is written
into a namespace that is terminating, or gone and not restored too. A service keeps its
cluster IPs and node ports: the server's own allocator takes them (an IPAddress object each)
when they are free; when one is taken the service is reported and skipped, never given
another. An object being deleted in the source is not restored.

What exists now is compared with the source as diff --from compares it: an object alike is
reported unchanged, one that differs is reported with the fields that differ and left alone,
unless --overwrite, which writes the source's content over it with its resourceVersion now
as precondition (the same uid only: an object recreated since, another uid, is reported and
left alone). A value this release cannot read in full (fields of a newer release) is
refused, on either side.

Each object is reported as kubectl reports writes (configmap/app restored); -o json or yaml
prints the report instead. --dry-run runs every check a write would and writes nothing.
Ctrl-C stops between objects, and says how many were written; running the restore again
finds them unchanged and writes the rest. Admission plugins and webhooks do not run.

Exit status: 0 when every object was restored or was unchanged, 1 when one was left alone
(it differs, it was skipped, or its write failed), 130 when interrupted.`,
		Example: `  # What would come back of the shop namespace from last night's snapshot, without writing
  # (give the server's encryption config whenever values are encrypted)
  regctl restore --from backup.db -n shop --dry-run --encryption-provider-config=encryption.yaml

  # Bring it back: the namespace, and everything in it
  regctl restore --from backup.db -n shop --encryption-provider-config=encryption.yaml

  # One config map as it was at 14:00 UTC on 28 November, written over what it holds now
  regctl restore --from rev:2026-11-28T14:00:00Z configmaps/app-config -n shop --overwrite

  # As it was at revision 12 (regctl inspect configmaps/app-config -n shop --history)
  regctl restore --from rev:12 configmaps/app-config -n shop --overwrite`,
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.From, "from", "", "Where to restore from: an etcd snapshot file, rev:TIME (rev:2026-11-29T14:00:00Z, rev:90m: the last revision written by then) or rev:N (the etcd at revision N, until it is compacted)")
	fs.StringVar(&opts.FromEncryption, "from-encryption-provider-config", "", "The --encryption-provider-config the source's values were encrypted with, when its keys are not today's")
	cli.AddScopeFlags(fs, &opts.Scope)
	fs.StringVarP(&opts.Selector, "selector", "l", "", "Restore only the objects with these labels")
	fs.BoolVar(&opts.Overwrite, "overwrite", false, "Write the source's content over an object that differs now (the same uid only)")
	cli.AddDryRunFlag(cmd, "Compare and check every write, print what would be done, write nothing")
	fs.StringVarP(&opts.output, "output", "o", "", "Print the report as json or yaml instead of a line per object")
	cli.CompleteNamespaces(cmd, g)
	_ = cmd.RegisterFlagCompletionFunc("output", completion.Formats(render.JSON, render.YAML))
	return cli.WithOptions(cmd, opts, runF)
}

func (o *Options) Complete(cmd *cobra.Command, args []string) (err error) {
	o.NamespaceSet = cmd.Flags().Changed("namespace")
	o.Args = args
	if o.DryRun, err = cli.DryRun(cmd); err != nil {
		return err
	}
	o.Output, err = render.ParseFormat(cmp.Or(o.output, string(render.Table)), formats...)
	return err
}

func (o *Options) Validate() error {
	switch {
	case o.From == "":
		return errors.New("`--from` names no source: give an etcd snapshot file, rev:TIME or rev:N")
	case o.From == "live":
		return errors.New("`--from live` is what is stored now: restore from a snapshot file, rev:TIME or rev:N")
	case o.RevisionGiven():
		return errors.New("`--revision` and restore: name the revision to restore from with `--from rev:N` or `--from rev:TIME`")
	case o.AllNamespaces && o.NamespaceSet:
		return cli.ErrNamespaceAndAll
	case len(o.Args) == 0 && !o.NamespaceSet && !o.AllNamespaces:
		return errors.New("name what to restore: TYPE[/NAME], `-n NAMESPACE` (the namespace and everything in it) or `-A` (everything)")
	}
	if _, err := changes.ParseSource(o.From); err != nil {
		return err
	}
	return o.SessionConfig().Writable()
}

// live is the etcd a restore writes to, as it is now.
var live = changes.Source{Name: pointintime.Live}

// Run opens the live etcd (written) and the source (read), pairs their
// resources, and restores.
func (o *Options) Run(ctx context.Context) error {
	ctx = render.WithWarnings(ctx, o.IO.ErrOut)
	gctune.BoundHeap()
	sides := o.sessions()
	defer sides.Close()
	req, err := o.request(ctx, sides)
	if err != nil {
		return err
	}
	_, err = restore.Run(ctx, req)
	if errors.Is(err, restore.ErrLeftAlone) {
		return &cli.ExitError{Code: 1}
	}
	return err
}

// sessions are the live session, writable, that also looks up namespaces
// and CRDs, and the source's, with its own encryption config if given.
func (o *Options) sessions() *pointintime.Sessions {
	scope := o.Scope
	if scope.AllNamespaces {
		scope.Namespace = ""
	}
	sides := pointintime.New(o.SessionConfig(), o.Args, scope)
	sides.NamespaceAlone = true
	sides.Configure = func(src changes.Source, cfg *storagemap.Config) {
		if src == live {
			cfg.Writes = !o.DryRun
			// Writes into a namespace look it up, as the server's
			// NamespaceLifecycle admission does; what holds a cluster IP
			// a service finds taken is named.
			if cfg.Only != "" {
				cfg.Only += ",namespaces," + crds + "," + ipAddresses
			}
		} else if o.FromEncryption != "" {
			cfg.Options = cfg.Options.WithEncryptionConfig(o.FromEncryption)
		}
	}
	return sides
}

// request opens both sides and pairs their resources.
func (o *Options) request(ctx context.Context, sides *pointintime.Sessions) (restore.Request, error) {
	pair, err := sides.Pair(ctx, o.From, pointintime.Live)
	if err != nil {
		return restore.Request{}, err
	}
	req := restore.Request{
		From: pair.From, To: pair.To, Pairs: pair.Pairs, LabelSelector: o.Selector, ChunkSize: 500,
		DryRun: o.DryRun, Overwrite: o.Overwrite, Timeout: o.RequestTimeout, AllNamespaces: o.AllNamespaces,
		Namespaces: handleOf(sides.Session(live), "namespaces"), CRDs: handleOf(sides.Session(live), crds),
		Services: handleOf(sides.Session(live), "services"), IPAddresses: handleOf(sides.Session(live), ipAddresses),
		Out: o.IO.Out, ErrOut: o.IO.ErrOut, Output: o.Output, Progress: render.NewProgress(o.IO.ErrOut),
		Selection: o.selection(),
	}
	req.Reopen = func(ctx context.Context) (*restore.Request, error) {
		pairs, s, err := sides.PairAgain(ctx, pointintime.Live)
		if err != nil {
			return nil, err
		}
		again := req
		again.Pairs, again.Namespaces, again.CRDs = pairs, handleOf(s, "namespaces"), handleOf(s, crds)
		again.Services, again.IPAddresses = handleOf(s, "services"), handleOf(s, ipAddresses)
		return &again, nil
	}
	return req, nil
}

const ipAddresses = "ipaddresses.networking.k8s.io"

var crds = handle.CRDsPath

// selection is what the command line names to restore, as given.
func (o *Options) selection() string {
	words := slices.Clone(o.Args)
	switch {
	case o.AllNamespaces:
		words = append(words, "-A")
	case o.NamespaceSet:
		words = append(words, "-n", o.Namespace)
	}
	if o.Selector != "" {
		words = append(words, "-l", o.Selector)
	}
	return strings.Join(words, " ")
}

// handleOf is the handle of path in s's map, nil when it has none.
func handleOf(s *storagemap.Session, path string) *handle.Handle {
	return s.Map.Handles[path]
}
