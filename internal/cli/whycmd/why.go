// Package whycmd is `regctl why`: what holds a deletion (why.Namespace,
// why.ObjectOf).
package whycmd

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/completion"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/target"
	"github.com/regctl/regctl/internal/why"
)

// Options are the options of `regctl why`.
type Options struct {
	*cli.Globals
	target.Scope
	Args   []string
	Why    why.Options
	output string
	ref    target.Ref
}

// New is the `regctl why` command; runF, when set, runs instead of
// Options.Run (cli.WithOptions).
func New(g *cli.Globals, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Globals: g}
	cmd := &cobra.Command{
		Use:   "why TYPE/NAME [-n NAMESPACE] [-o table|yaml|json]",
		Short: "Say what holds a deletion: a namespace stuck in Terminating, an object's finalizers and dependents",
		Example: `  # A namespace stuck in Terminating: everything still stored in it, what holds each
  # object, and the way out
  regctl why namespace/shop

  # One object: its deletion, its finalizers and who removes them, its dependents
  regctl why configmaps/app-config -n shop

  # The same as data (from a backup with --snapshot FILE), with the server's
  # encryption config to read its secrets
  regctl why namespace/shop -o json --encryption-provider-config=encryption.yaml`,
		Long: `Say what holds a deletion, from what etcd holds.

For a namespace: its spec.finalizers and the conditions the namespace controller wrote;
every object still stored in it, of every resource (custom resources included, and those of
a CRD that is gone or being deleted), each with its deletionTimestamp, its finalizers and,
for Kubernetes' own, the controller that removes them and when; what else holds each
object (the kubelet that confirms a pod's graceful deletion, the pods that use a claim,
the dependents that block a foreground deletion); the APIServices whose status says
unavailable, since the namespace controller finishes no namespace while discovery fails;
and the way out, in order, with the commands.

For any other object: its deletionTimestamp and finalizers, and its dependents
(ownerReferences naming it, in its namespace, or anywhere for a cluster-scoped object).

regctl takes none of the steps it prints. Finalizing a namespace by hand while it still
holds objects leaves them in etcd, orphaned; why says so before it says how.
Everything is read at one etcd revision (--revision N or a time for an earlier one), through the
server's own stores; it works on a live etcd, a snapshot (--snapshot) and a sandbox.`,
		Args: cobra.RangeArgs(1, 2),
	}
	fs := cmd.Flags()
	fs.StringVarP(&opts.output, "output", "o", string(render.Table), "Output format: table|yaml|json")
	cli.AddNamespaceFlag(fs, &opts.Scope)
	cli.CompleteNamespaces(cmd, g)
	_ = cmd.RegisterFlagCompletionFunc("output", completion.Formats(why.Formats...))
	return cli.WithOptions(cli.ReadsAtRevision(cmd), opts, runF)
}

func (o *Options) Complete(cmd *cobra.Command, args []string) (err error) {
	if o.Why.Output, err = render.ParseFormat(o.output, why.Formats...); err != nil {
		return err
	}
	o.Why.Revision = o.Revision
	o.NamespaceSet = cmd.Flags().Changed("namespace")
	o.Args = args
	o.ref, err = target.ParseRef(args, "", false)
	return err
}

func (o *Options) Validate() error {
	if len(o.ref.Names) != 1 || o.ref.Subresource != "" {
		return errors.New("name exactly one object, e.g. `namespace/shop` or `pods/web`")
	}
	return nil
}

func (o *Options) Run(ctx context.Context) error {
	session, ks, err := storagemap.OpenAll(ctx, o.SessionConfig())
	if err != nil {
		return err
	}
	defer session.Close()
	t, err := target.One(session.Map, o.ref, o.Scope)
	if err != nil {
		return err
	}
	var r *why.Report
	if t.Path == "namespaces" {
		r, err = why.Namespace(ctx, ks, o.ref.Names[0], o.Why)
	} else {
		r, err = why.ObjectOf(ctx, ks, t, o.ref.Names[0], o.Why)
	}
	if err != nil {
		return err
	}
	return render.Print(o.IO.Out, o.Why.Output, r)
}
