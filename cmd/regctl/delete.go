package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/features"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/resource"
	kubectldelete "k8s.io/kubectl/pkg/cmd/delete"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/regctl/regctl/internal/apply"
	"github.com/regctl/regctl/internal/get"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/stores"
	"github.com/regctl/regctl/internal/target"
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
can be read is refused. What depended on the object may break.`,
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
		ValidArgsFunction: completeResourceObjects(g),
		Args:              cobra.MinimumNArgs(1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			opts.NamespaceSet = cmd.Flags().Changed("namespace")
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
	addScopeFlags(fs, &opts.Scope)
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
	refs, err := target.ParseRefs(opts.Args, "", false)
	if err != nil {
		return err
	}
	named := len(refs[0].Names) > 0
	switch {
	case named && (opts.All || opts.LabelSelector != ""):
		return errors.New("name objects or select them with `-l`/`--all`, not both")
	case !named && !opts.All && opts.LabelSelector == "":
		return fmt.Errorf("name the %s to delete, or pass `-l SELECTOR` or `--all`", refs[0].Resource)
	}
	if err := opts.writable(); err != nil {
		return err
	}
	w, targets, err := opts.openLiveTypes(ctx, refs, opts.Scope, "delete", target.Types)
	if err != nil {
		return err
	}
	defer w.Close()
	// The gate is known once the map applies --feature-gates.
	if opts.IgnoreStoreReadError && stores.UnsafeDeleteAllowed() && !named {
		return fmt.Errorf("deleting %s: %w", refs[0].Resource, stores.UnsafeDeleteCollectionError())
	}
	doomed, total, err := opts.doomed(ctx, targets)
	if err != nil {
		return err
	}
	if total == 0 {
		fmt.Fprintln(opts.IO.ErrOut, get.NoResources([]stores.Target{targets[0].Target}))
		return nil
	}
	return opts.deleteEach(ctx, doomed, total)
}

// doomedOf are the objects of one type to delete.
type doomedOf struct {
	stores.Target
	victims []stores.Victim
}

// doomed are the objects to delete of each type, in the order named, and
// how many they are in all.
func (opts *deleteOptions) doomed(ctx context.Context, targets []target.Named) ([]doomedOf, int, error) {
	var out []doomedOf
	total := 0
	for _, t := range targets {
		victims, err := opts.victims(ctx, t.Target, t.Names)
		if err != nil {
			return nil, 0, err
		}
		if len(victims) > 0 {
			out = append(out, doomedOf{t.Target, victims})
			total += len(victims)
		}
	}
	return out, total, nil
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

// deleteEach deletes the victims of each type, in the order named, saying
// what became of each.
func (opts *deleteOptions) deleteEach(ctx context.Context, doomed []doomedOf, total int) error {
	do := stores.DeleteOptions{WriteOptions: stores.WriteOptions{DryRun: opts.DryRun}, IgnoreStoreReadError: opts.IgnoreStoreReadError}
	if opts.GracePeriod >= 0 {
		do.GracePeriod = &opts.GracePeriod
	}
	fmt.Fprintln(opts.IO.ErrOut, apply.BypassWarning)
	if opts.IgnoreStoreReadError {
		fmt.Fprintln(opts.IO.ErrOut, unsafeDeleteWarning())
	}
	rep := apply.NewReport(apply.ReportOptions{Out: opts.IO.Out, ErrOut: opts.IO.ErrOut, Output: opts.Output, DryRun: opts.DryRun, Verb: "deleted", Total: total})
	for _, d := range doomed {
		kind := strings.ToLower(d.Resource.Kind)
		rep.Line = opts.deletedLine(d.Target)
		err := stores.DeleteEach(ctx, d.Target, d.victims, do, func(v stores.Victim, deleted stores.Deleted, err error) error {
			switch {
			case err != nil && opts.IgnoreNotFound && apierrors.IsNotFound(err):
				rep.Ignore()
			case err != nil:
				rep.Fail(ctx, kind+"/"+v.Name, err)
			case deleted.Removed:
				return rep.Written(deleted.Object, deletedName(d.Target, v, deleted), "deleted")
			default:
				return rep.Written(deleted.Object, deletedName(d.Target, v, deleted), "marked for deletion")
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return rep.Finish(ctx)
}

// deletedLine says that an object was deleted in kubectl delete's words
// (`deployment.apps "web" deleted from shop namespace`), with kubectl's
// own printer. An object only marked for deletion (finalizers, a grace
// period) is deleted as far as kubectl says; a warning says it stays.
func (opts *deleteOptions) deletedLine(t stores.Target) func(runtime.Object, string) error {
	scope := meta.RESTScopeRoot
	if t.Resource.Namespaced {
		scope = meta.RESTScopeNamespace
	}
	kubectl := &kubectldelete.DeleteOptions{IOStreams: genericiooptions.IOStreams{Out: opts.IO.Out}, GracePeriod: int(opts.GracePeriod)}
	if opts.DryRun {
		kubectl.DryRunStrategy = cmdutil.DryRunClient
	}
	return func(name runtime.Object, what string) error {
		m, err := meta.Accessor(name)
		if err != nil {
			return err
		}
		mapping := &meta.RESTMapping{GroupVersionKind: name.GetObjectKind().GroupVersionKind(), Scope: scope}
		kubectl.PrintObj(&resource.Info{Mapping: mapping, Namespace: m.GetNamespace(), Name: m.GetName()})
		if what == "deleted" {
			return nil
		}
		p, err := render.NamePrinter(what)
		if err != nil {
			return err
		}
		var line strings.Builder
		if err := p.PrintObj(name, &line); err != nil {
			return err
		}
		fmt.Fprintf(opts.IO.ErrOut, "warning: %s: it stays until its finalizers are done or its grace period ends\n", strings.TrimSuffix(line.String(), "\n"))
		return nil
	}
}

// deletedName is what names a deleted object: the object the store
// returned, or, for one deleted unread, its type's kind and its name.
func deletedName(t stores.Target, v stores.Victim, d stores.Deleted) runtime.Object {
	if d.Object != nil && !d.Object.GetObjectKind().GroupVersionKind().Empty() {
		return d.Object
	}
	return render.NameOnly(t.GroupVersion().WithKind(t.Resource.Kind), v.Namespace, v.Name)
}
