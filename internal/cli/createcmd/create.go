// Package createcmd is `regctl create`: a manifest's objects created through
// their stores (writes.Run with writes.Create).
package createcmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/completion"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/stores"
	"github.com/regctl/regctl/internal/writes"
)

// Options are the options of `regctl create`.
type Options struct {
	cli.WriteOptions
	Filenames []string
}

// New is the `regctl create` command; runF, when set, runs instead of
// Options.Run (cli.WithOptions).
func New(g *cli.Globals, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{WriteOptions: cli.WriteOptions{Globals: g}}
	cmd := &cobra.Command{
		Use:   "create -f FILE|- [-n NAMESPACE] [--dry-run=server] [-o yaml|json|name]",
		Short: "Create objects in etcd through kube-apiserver's own stores",
		Long: `Create the objects of a manifest (YAML or JSON: one object, a list such as kind: List or
ConfigMapList, its items read as kubectl reads them, or a stream of documents) by writing
them through the store of their path, exactly as kube-apiserver's create would: decoding
with kubectl's field validation (--validate, strict by default) and defaulting (a custom
resource's by its CRD's schema, which prunes unknown fields when they are not refused),
generateName, uid, creationTimestamp, managedFields (the server's field manager records
the fields as set by "regctl", or the manager --field-manager names), the resource's
strategy and validation, encoding in the storage version and media type, encryption when
configured, and a TTL lease for events.

Admission plugins, webhooks and authorization do not run (regctl says so on stderr);
the namespace must exist and not be terminating, as the NamespaceLifecycle plugin checks.
Every document is read and checked first, with the store's own defaulting, strategy and
validation: a stream with a bad document writes nothing. What depends on etcd (an object that
already exists, a namespace the same manifest creates) is checked as each object is written.
A custom resource of a CRD the same manifest creates is served only once the CRD is
established: in a sandbox (--data-dir) regctl establishes the CRDs it creates, and then checks
and writes those custom resources, after the rest; on a live etcd, or with --dry-run, it
is refused.

A resource whose stored values are encrypted is not written in plain text: pass the
apiserver's --encryption-provider-config, or --allow-plaintext to write it anyway.
A service gets its cluster IP and node ports from the server's own allocators: an
IPAddress object in one of the cluster's ServiceCIDRs, ports from the node port range in
etcd. With no ServiceCIDR in etcd (no apiserver ever ran on it) such a create is refused.

A metadata.resourceVersion in the manifest is dropped, where the server refuses it, so
that what ` + "`regctl get -o yaml`" + ` prints, now or at a --revision, can be created again:
the way to bring back a deleted object from ` + "`regctl inspect TYPE/NAME --history`" + `.`,
		Example: `  # Create the objects of a file
  regctl create -f pods.yaml

  # Check what would be stored, without writing
  regctl create -f pod.yaml --dry-run=server -o yaml`,
		Args: cobra.NoArgs,
	}
	fs := cmd.Flags()
	cli.AddFilenameFlags(fs, &opts.Filenames, &opts.Recursive, "The manifest to create")
	fs.StringVarP(&opts.Namespace, "namespace", "n", "default", "Namespace for objects that do not name one")
	cli.AddWriteFlags(cmd, &opts.WriteOptions)
	cli.AddManifestFlags(cmd, &opts.WriteOptions)
	cli.CompleteNamespaces(cmd, g)
	_ = cmd.RegisterFlagCompletionFunc("output", completion.Formats(cli.WriteFormats...))
	return cli.WithOptions(cmd, opts, runF)
}

func (o *Options) Run(ctx context.Context) error {
	ctx = render.WithWarnings(ctx, o.IO.ErrOut)
	return o.WriteManifest(ctx, o.Filenames, "", writes.Create(stores.WriteOptions{DryRun: o.DryRun, FieldManager: o.FieldManager}))
}
