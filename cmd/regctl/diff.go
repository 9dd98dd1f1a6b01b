package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"
	kubectldiff "k8s.io/kubectl/pkg/cmd/diff"
	"k8s.io/utils/exec"

	"github.com/regctl/regctl/internal/apply"
	"github.com/regctl/regctl/internal/completion"
	"github.com/regctl/regctl/internal/render"
)

type diffOptions struct {
	writeOptions
	Filenames []string
	Diff      apply.DiffOptions
}

func newDiffCmd(g *globalOptions, runF func(context.Context, *diffOptions) error) *cobra.Command {
	opts := &diffOptions{writeOptions: writeOptions{globalOptions: g}}
	cmd := &cobra.Command{
		Use:   "diff -f FILE|- [-n NAMESPACE]",
		Short: "Diff what is stored against what writing a manifest would store, as kubectl diff does",
		Long: `Diff the objects stored now against the objects a write of the manifest would store,
as kubectl diff does, without a running kube-apiserver: on a sandbox (--data-dir), a
restored backup, or a cluster whose apiserver is down.

For each object of the manifest, regctl reads the stored object through its store, and
runs the write through the same store as a dry run: a create when no object is stored,
else a replace with the stored resourceVersion (or the manifest's, when it names one),
with the server's decoding, defaulting, strategy and validation. The two objects are
written as YAML to two directories, named as kubectl names them
([group.]version.Kind.namespace.name), and kubectl's own diff code compares them: diff -u
-N, or the program $KUBECTL_EXTERNAL_DIFF names. metadata.managedFields is left out
unless --show-managed-fields, and a Secret's data is masked unless --show-secrets.

A replace writes the manifest's object whole: fields it leaves out are dropped, as with
kubectl diff --server-side on objects the manifest's own manager wrote. Nothing is written.

Exit status, as kubectl diff's: 0 when nothing would change, 1 when something would, more
than 1 on error (an object that cannot be read or written: nothing is then diffed).`,
		Example: `  # What writing the manifest would change: exit 0 when nothing would, 1 when something
  # would, and the diff
  regctl diff -f pods.yaml

  # With another diff program, as kubectl diff takes it
  KUBECTL_EXTERNAL_DIFF="diff -u -i" regctl diff -f pods.yaml`,
		Args: cobra.NoArgs,
		PreRunE: func(cmd *cobra.Command, args []string) error {
			opts.NamespaceSet = cmd.Flags().Changed("namespace")
			if len(opts.Filenames) == 0 {
				return exitTrouble(errors.New("`-f` names no manifest: give a file, or - for standard input"))
			}
			if err := opts.checkFlags(""); err != nil {
				return exitTrouble(err)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runDiff(cmd.Context(), opts)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return exitTrouble(err) })
	fs := cmd.Flags()
	fs.StringSliceVarP(&opts.Filenames, "filename", "f", nil, "The manifest to diff: a file, or - for standard input; repeat it, or separate with commas, for several, read in turn")
	fs.StringVarP(&opts.Namespace, "namespace", "n", "default", "Namespace for objects that do not name one")
	fs.BoolVar(&opts.Diff.ShowManagedFields, "show-managed-fields", false, "Include metadata.managedFields in the diff")
	fs.BoolVar(&opts.Diff.ShowSecrets, "show-secrets", false, "Do not mask the values of Secrets")
	_ = cmd.RegisterFlagCompletionFunc("namespace", completion.Namespaces(g.completionFlags))
	return cmd
}

func runDiff(ctx context.Context, opts *diffOptions) error {
	ctx = render.WithWarnings(ctx, opts.IO.ErrOut)
	opts.Diff.Program = &kubectldiff.DiffProgram{Exec: exec.New(), IOStreams: opts.IO}
	return diffExit(opts.diffManifest(ctx, opts.Filenames, opts.Diff))
}

// diffExit is kubectl diff's exit status for err: the diff program's own
// when it is 0 or 1 (1: the objects differ, and the diff said so), more
// than 1 with a line on trouble.
func diffExit(err error) error {
	var exit exec.ExitError
	if errors.As(err, &exit) && exit.ExitStatus() <= 1 {
		return diffStatus(exit.ExitStatus() == 1, nil)
	}
	return diffStatus(false, err)
}
