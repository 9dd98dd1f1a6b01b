// Package deletecmd is `regctl delete`: objects deleted through their
// stores, with graceful deletion and finalizers (writes.Delete).
package deletecmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/completion"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/target"
	"github.com/regctl/regctl/internal/writes"
)

// Options are the options of `regctl delete`.
type Options struct {
	cli.WriteOptions
	Args   []string
	Delete writes.DeleteOptions
	refs   []target.Ref
}

// New is the `regctl delete` command; runF, when set, runs instead of
// Options.Run (cli.WithOptions).
func New(g *cli.Globals, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{WriteOptions: cli.WriteOptions{Globals: g}}
	cmd := &cobra.Command{
		Use:   "delete TYPE[,TYPE...] [NAME...] | TYPE/NAME... [-l SELECTOR | --all] [-n NAMESPACE | -A] [--grace-period N]",
		Short: "Delete objects in etcd through kube-apiserver's own stores",
		Long: `Delete objects through the store of their path, with the resource's graceful deletion and
finalizers, as kube-apiserver's DELETE would: a pod bound to a node with a grace period
gets a deletionTimestamp and stays until it is deleted with --grace-period=0; a namespace
goes to Terminating until its finalizers are done; other objects are removed.

Each delete is reported on stdout as kubectl delete reports it (deployment.apps "web"
deleted from shop namespace); an object only marked for deletion is also said to stay, on
stderr. With -o, each deleted object is printed instead, as it was when deleted (or, marked
for deletion, as it remains); -o name prints kind.group/name.

A service's cluster IP and node ports are released as the server releases them: its
IPAddress object is deleted and its ports are freed in the node port range. That needs the
ServiceCIDR the IP came from; with none in etcd the delete is refused, not left half done.

An object whose stored value cannot be decoded or decrypted cannot be deleted that way: the
store reads it first. --ignore-store-read-error-with-cluster-breaking-potential deletes it
unread through the store's unsafe deleter, as kube-apiserver does for a DELETE with
ignoreStoreReadErrorWithClusterBreakingPotential (KEP-3926), and only as the server does: with
--feature-gates=AllowUnsafeMalformedObjectDeletion=true (without it the server drops the
option), for named objects, and not with --dry-run or --grace-period. Preconditions,
finalizers, graceful deletion and the store's after-delete steps are skipped; an object that
can be read is refused. What depended on the object may break.

A delete that leaves the object in place, marked for deletion (a grace period, finalizers),
writes it back: over a stored value with fields this release does not know, that is refused
unless --drop-unknown-fields, as replace refuses it.`,
		Example: `  # Delete one config map
  regctl delete configmaps/old-config -n shop

  # Delete objects of several types by name, as kubectl takes them
  regctl delete configmaps/old-settings secrets/old-token -n shop

  # Remove pods at once, without a grace period
  regctl delete pods -l app=batch -n shop --grace-period=0

  # Keep a copy of what is deleted
  regctl delete configmaps -l tier=cache -n shop -o yaml > deleted.yaml

  # Remove a secret whose value can no longer be decrypted or decoded
  regctl delete secrets/legacy-token -n kube-system --ignore-store-read-error-with-cluster-breaking-potential --feature-gates=AllowUnsafeMalformedObjectDeletion=true`,
		ValidArgsFunction: completion.ResourceObjects(g.CompletionFlags),
		Args:              cobra.MinimumNArgs(1),
	}
	fs := cmd.Flags()
	cli.AddScopeFlags(fs, &opts.Scope)
	fs.StringVarP(&opts.Delete.LabelSelector, "selector", "l", "", "Delete the objects with these labels")
	fs.BoolVar(&opts.Delete.All, "all", false, "Delete every object of the resource in the namespace")
	fs.BoolVar(&opts.Delete.IgnoreNotFound, "ignore-not-found", false, "Treat objects that do not exist as deleted: say nothing of them and exit 0")
	fs.Int64Var(&opts.Delete.GracePeriod, "grace-period", -1, "Seconds to give the object to terminate; -1 uses the object's own, 0 removes it at once")
	fs.BoolVar(&opts.Delete.IgnoreStoreReadError, "ignore-store-read-error-with-cluster-breaking-potential", false, "Delete named objects whose stored value cannot be read, unread and without finalizers or preconditions (needs --feature-gates=AllowUnsafeMalformedObjectDeletion=true)")
	cli.AddWriteFlags(cmd, &opts.WriteOptions)
	cli.AddDropUnknownFieldsFlag(fs, &opts.Delete.DropUnknownFields)
	cli.CompleteNamespaces(cmd, g)
	_ = cmd.RegisterFlagCompletionFunc("output", completion.Formats(cli.WriteFormats...))
	return cli.WithOptions(cmd, opts, runF)
}

func (o *Options) Complete(cmd *cobra.Command, args []string) (err error) {
	o.Args = args
	if o.refs, err = target.ParseRefs(args, "", false); err != nil {
		return err
	}
	return o.WriteOptions.Complete(cmd, args)
}

func (o *Options) Validate() error {
	if err := o.WriteOptions.Validate(); err != nil {
		return err
	}
	if err := o.Delete.Check(o.refs); err != nil {
		return err
	}
	return o.SessionConfig().Writable()
}

func (o *Options) Run(ctx context.Context) error {
	ctx = render.WithWarnings(ctx, o.IO.ErrOut)
	cfg := o.SessionConfig()
	cfg.Writes = !o.DryRun
	session, targets, err := cli.OpenTargets(ctx, storagemap.OpenData, cfg, o.refs, o.Scope, "delete", target.Types)
	if err != nil {
		return err
	}
	defer session.Close()
	d := o.Delete
	d.Out, d.ErrOut, d.Output, d.DryRun = o.IO.Out, o.IO.ErrOut, o.Output, o.DryRun
	return writes.Delete(ctx, o.refs, targets, d)
}
