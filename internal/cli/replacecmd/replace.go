// Package replacecmd is `regctl replace`: a manifest's objects written over
// what is stored, through their stores (writes.Run with writes.Replace).
package replacecmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/completion"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/stores"
	"github.com/regctl/regctl/internal/writes"
)

// Options are the options of `regctl replace`.
type Options struct {
	cli.WriteOptions
	Filenames   []string
	Subresource string
	Force       bool
}

// New is the `regctl replace` command; runF, when set, runs instead of
// Options.Run (cli.WithOptions).
func New(g *cli.Globals, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{WriteOptions: cli.WriteOptions{Globals: g}}
	cmd := &cobra.Command{
		Use:   "replace -f FILE|- [--subresource status] [--force] [--dry-run=server] [-o yaml|json|name]",
		Short: "Replace objects in etcd through kube-apiserver's own stores",
		Long: `Replace objects with the versions in a manifest, through the store of their path, as
kube-apiserver's update (PUT) would: the object's metadata.resourceVersion is the
precondition, so a stale one fails with Conflict and nothing is written. An object without
a resourceVersion is refused unless --force, which reads the current one first.

The server's field manager records the write in metadata.managedFields, as the manager
"regctl" or the one --field-manager names; a manifest without managedFields keeps the
stored ones, so that what server-side apply owns stays owned.

With --subresource (e.g. status) the write goes through that subresource's store, as
PUT .../status would: only the fields that subresource owns change.

Every object is checked first with a dry-run update through its store (which reads the
stored object and writes nothing): a manifest with an object that would fail writes nothing.
A resource whose stored values are encrypted is not written in plain text: pass the
apiserver's --encryption-provider-config, or --allow-plaintext to write it anyway.

A stored value this release cannot write back whole is never written over: one that holds
fields its types do not declare (a newer kube-apiserver wrote them; this release's decoder
skips them, and a write would drop them) or that is stored at a newer version than this
release writes. The write is refused, naming the key and the fields (by number where no name
is known). --drop-unknown-fields writes over the first kind anyway, dropping the fields as
this release's kube-apiserver would; use the regctl built for the cluster's release instead.`,
		Example: `  # Write back an (edited) config map; its resourceVersion is the precondition
  regctl get configmaps/app-config -n shop -o yaml > cm.yaml
  regctl replace -f cm.yaml

  # Write a pod's status through the status store, as a kubelet's PUT .../status
  regctl get pods/web -n shop -o yaml > pod.yaml
  regctl replace --subresource status -f pod.yaml`,
		Args: cobra.NoArgs,
	}
	fs := cmd.Flags()
	cli.AddFilenameFlags(fs, &opts.Filenames, &opts.Recursive, "The manifest of the new versions")
	fs.StringVarP(&opts.Namespace, "namespace", "n", "default", "Namespace for objects that do not name one")
	fs.StringVar(&opts.Subresource, "subresource", "", "Write through this subresource's store (e.g. status)")
	fs.BoolVar(&opts.Force, "force", false, "Replace objects that carry no resourceVersion: read the current one first")
	cli.AddWriteFlags(cmd, &opts.WriteOptions)
	cli.AddManifestFlags(cmd, &opts.WriteOptions)
	cli.AddDropUnknownFieldsFlag(fs, &opts.DropUnknownFields)
	cli.CompleteNamespaces(cmd, g)
	_ = cmd.RegisterFlagCompletionFunc("output", completion.Formats(cli.WriteFormats...))
	return cli.WithOptions(cmd, opts, runF)
}

func (o *Options) Run(ctx context.Context) error {
	ctx = render.WithWarnings(ctx, o.IO.ErrOut)
	return o.WriteManifest(ctx, o.Filenames, o.Subresource, writes.Replace(stores.WriteOptions{DryRun: o.DryRun, CurrentVersion: o.Force, FieldManager: o.FieldManager, DropUnknownFields: o.DropUnknownFields}))
}
