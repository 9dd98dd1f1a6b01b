package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/features"

	"github.com/regctl/regctl/internal/stores"
)

type deleteOptions struct {
	writeOptions
	Args          []string
	LabelSelector string
	All           bool
	GracePeriod   int64
	// IgnoreNotFound passes over named objects that do not exist.
	IgnoreNotFound bool
	// IgnoreStoreReadError deletes named objects that cannot be read,
	// unread: the server's ignoreStoreReadErrorWithClusterBreakingPotential.
	IgnoreStoreReadError bool
}

func newDeleteCmd(g *globalOptions, runF func(context.Context, *deleteOptions) error) *cobra.Command {
	opts := &deleteOptions{writeOptions: writeOptions{globalOptions: g}}
	var output string
	cmd := &cobra.Command{
		Use:   "delete TYPE[/NAME] [NAME...] [-l SELECTOR | --all] [-n NAMESPACE | -A] [--grace-period N]",
		Short: "Delete objects in etcd through kube-apiserver's own stores",
		Long: `Delete objects through the store of their path, with the resource's graceful deletion and
finalizers, as kube-apiserver's DELETE would: a pod bound to a node with a grace period
gets a deletionTimestamp and stays until it is deleted with --grace-period=0; a namespace
goes to Terminating until its finalizers are done; other objects are removed.

With -o, each deleted object is printed as it was when deleted (or, marked for deletion, as
it remains); -o name prints kind/name.

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
can be read is refused. What depended on the object may break.`,
		Example: `  # Delete one config map
  regctl delete configmaps/old-config -n shop

  # Remove pods at once, without a grace period
  regctl delete pods -l app=batch -n shop --grace-period=0

  # Keep a copy of what is deleted
  regctl delete configmaps -l tier=cache -n shop -o yaml > deleted.yaml

  # Remove a secret whose value can no longer be decrypted or decoded
  regctl delete secrets/legacy-token -n kube-system --ignore-store-read-error-with-cluster-breaking-potential --feature-gates=AllowUnsafeMalformedObjectDeletion=true`,
		ValidArgsFunction: completeResourceObjects(g),
		Args:              cobra.MinimumNArgs(1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			opts.namespaceSet = cmd.Flags().Changed("namespace")
			return opts.checkFlags(output)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runDelete(cmd.Context(), opts)
		},
	}
	fs := cmd.Flags()
	addScopeFlags(fs, &opts.scopeOptions)
	fs.StringVarP(&opts.LabelSelector, "selector", "l", "", "Delete the objects with these labels")
	fs.BoolVar(&opts.All, "all", false, "Delete every object of the resource in the namespace")
	fs.BoolVar(&opts.IgnoreNotFound, "ignore-not-found", false, "Treat objects that do not exist as deleted: say nothing of them and exit 0")
	fs.Int64Var(&opts.GracePeriod, "grace-period", -1, "Seconds to give the object to terminate; -1 uses the object's own, 0 removes it at once")
	fs.BoolVar(&opts.IgnoreStoreReadError, "ignore-store-read-error-with-cluster-breaking-potential", false, "Delete named objects whose stored value cannot be read, unread and without finalizers or preconditions (needs --feature-gates=AllowUnsafeMalformedObjectDeletion=true)")
	addWriteFlags(fs, &opts.writeOptions, &output)
	_ = cmd.RegisterFlagCompletionFunc("namespace", completeNamespaces(g))
	_ = cmd.RegisterFlagCompletionFunc("output", completeFormats(writeFormats...))
	return cmd
}

func runDelete(ctx context.Context, opts *deleteOptions) error {
	ctx = withWarnings(ctx, opts.IO.ErrOut)
	ref, err := parseObjectRef(opts.Args, "", false)
	if err != nil {
		return err
	}
	switch {
	case len(ref.Names) > 0 && (opts.All || opts.LabelSelector != ""):
		return errors.New("name objects or select them with `-l`/`--all`, not both")
	case len(ref.Names) == 0 && !opts.All && opts.LabelSelector == "":
		return fmt.Errorf("name the %s to delete, or pass `-l SELECTOR` or `--all`", ref.Resource)
	}
	if err := opts.writable(); err != nil {
		return err
	}
	w, t, err := opts.openLive(ctx, ref, opts.scopeOptions, "delete")
	if err != nil {
		return err
	}
	defer w.Close()
	// The gate is known once the map applies --feature-gates.
	if opts.IgnoreStoreReadError && stores.UnsafeDeleteAllowed() && len(ref.Names) == 0 {
		return fmt.Errorf("deleting %s: %w", ref.Resource, stores.UnsafeDeleteCollectionError())
	}
	victims, err := opts.victims(ctx, t, ref.Names)
	if err != nil {
		return err
	}
	if len(victims) == 0 {
		fmt.Fprintln(opts.IO.ErrOut, noResources([]stores.Target{t}))
		return nil
	}
	return opts.deleteEach(ctx, t, victims)
}

// unsafeDeleteWarning is said before deletes with
// --ignore-store-read-error-with-cluster-breaking-potential. kube-apiserver
// 1.36 sends no warning for such a DELETE (it only annotates the audit
// event), so this one is regctl's own: what the option does, or that the
// server would have dropped it.
func unsafeDeleteWarning() string {
	if !stores.UnsafeDeleteAllowed() {
		return fmt.Sprintf("warning: `--ignore-store-read-error-with-cluster-breaking-potential` has no effect: kube-apiserver drops the option while its %s feature gate is off", features.AllowUnsafeMalformedObjectDeletion)
	}
	return "warning: objects that cannot be read are deleted unread, without preconditions, finalizers or the store's after-delete steps: this may break the cluster if other objects depend on them"
}

// victims are the named objects, or those the store lists for `-l`/`--all`.
func (opts *deleteOptions) victims(ctx context.Context, t stores.Target, names []string) ([]stores.Victim, error) {
	if len(names) == 0 {
		return stores.Victims(ctx, t, opts.LabelSelector)
	}
	out := make([]stores.Victim, len(names))
	for i, n := range names {
		out[i] = stores.Victim{Namespace: t.Namespace, Name: n}
	}
	return out, nil
}

// deleteEach deletes the victims, saying what became of each.
func (opts *deleteOptions) deleteEach(ctx context.Context, t stores.Target, victims []stores.Victim) error {
	do := stores.DeleteOptions{WriteOptions: stores.WriteOptions{DryRun: opts.DryRun}, IgnoreStoreReadError: opts.IgnoreStoreReadError}
	if opts.GracePeriod >= 0 {
		do.GracePeriod = &opts.GracePeriod
	}
	writeWarning(opts.IO.ErrOut)
	if opts.IgnoreStoreReadError {
		fmt.Fprintln(opts.IO.ErrOut, unsafeDeleteWarning())
	}
	kind := strings.ToLower(t.Resource.Kind)
	rep := newWriteReport(&opts.writeOptions, "deleted", len(victims), false)
	err := stores.DeleteEach(ctx, t, victims, do, func(v stores.Victim, d stores.Deleted, err error) error {
		switch {
		case err != nil && opts.IgnoreNotFound && apierrors.IsNotFound(err):
			rep.ignore()
		case err != nil:
			rep.fail(ctx, kind+"/"+v.Name, err)
		case d.Removed:
			return rep.written(kind+"/"+v.Name, "deleted", d.Object)
		default:
			return rep.written(kind+"/"+v.Name, "marked for deletion", d.Object)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return rep.finish(ctx)
}
