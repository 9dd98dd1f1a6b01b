package writes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/features"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/resource"
	kubectldelete "k8s.io/kubectl/pkg/cmd/delete"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/stores"
	"github.com/regctl/regctl/internal/target"
)

// DeleteOptions are one `regctl delete`: which objects of the types named
// it deletes, how, and where it says what became of each.
type DeleteOptions struct {
	// Out gets kubectl delete's line per object, or with Output the
	// deleted objects; ErrOut the warnings and failures.
	Out, ErrOut io.Writer
	Output      render.Format // empty: a line per delete
	DryRun      bool
	// LabelSelector and All choose the objects of each type when none is
	// named.
	LabelSelector string
	All           bool
	// GracePeriod, when 0 or more, overrides each object's own.
	GracePeriod int64
	// IgnoreNotFound passes over named objects that do not exist.
	IgnoreNotFound bool
	// IgnoreStoreReadError deletes named objects that cannot be read,
	// unread: the server's ignoreStoreReadErrorWithClusterBreakingPotential.
	IgnoreStoreReadError bool
	// DropUnknownFields marks objects for deletion over stored values
	// that hold fields this release does not know, dropping them.
	DropUnknownFields bool
}

// Check tells whether refs (what the user named, as target.ParseRefs
// reads it) and the options choose objects one way: by name, or with a
// selector or all of them. It needs no etcd.
func (o DeleteOptions) Check(refs []target.Ref) error {
	named := len(refs[0].Names) > 0
	switch {
	case named && (o.All || o.LabelSelector != ""):
		return errors.New("name objects or select them with `-l`/`--all`, not both")
	case !named && !o.All && o.LabelSelector == "":
		return fmt.Errorf("name the %s to delete, or pass `-l SELECTOR` or `--all`", refs[0].Resource)
	}
	return nil
}

// Delete deletes, through the store of each type, the objects refs name,
// or those the selector or All chooses, resolved as targets (one per type,
// in the order named), as kubectl delete does: one delete per object, each
// reported on Out in kubectl's words, failures on ErrOut, the command's
// error summing them up. It needs the storage map built, which applies
// `--feature-gates`: refusing the unsafe delete of a collection depends on
// them.
func Delete(ctx context.Context, refs []target.Ref, targets []target.Named, o DeleteOptions) error {
	if o.IgnoreStoreReadError && stores.UnsafeDeleteAllowed() && len(refs[0].Names) == 0 {
		return fmt.Errorf("deleting %s: %w", refs[0].Resource, stores.UnsafeDeleteCollectionError())
	}
	doomed, total, err := o.doomed(ctx, targets)
	if err != nil {
		return err
	}
	if total == 0 {
		fmt.Fprintln(o.ErrOut, noResources(targets[0].Target))
		return nil
	}
	return o.deleteEach(ctx, doomed, total)
}

// noResources is what kubectl says when a delete finds nothing: the
// namespace, when it looked in one.
func noResources(t handle.Target) string {
	if t.Namespace == "" {
		return "No resources found"
	}
	return fmt.Sprintf("No resources found in %s namespace.", t.Namespace)
}

// doomedOf are the objects of one type to delete.
type doomedOf struct {
	handle.Target
	victims []stores.Victim
}

// doomed are the objects to delete of each type, in the order named, and
// how many they are in all.
func (o DeleteOptions) doomed(ctx context.Context, targets []target.Named) ([]doomedOf, int, error) {
	var out []doomedOf
	total := 0
	for _, t := range targets {
		victims, err := o.victims(ctx, t.Target, t.Names)
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

// victims are the named objects, or those the store lists for `-l`/`--all`.
func (o DeleteOptions) victims(ctx context.Context, t handle.Target, names []string) ([]stores.Victim, error) {
	if len(names) == 0 {
		return stores.Victims(ctx, t, o.LabelSelector)
	}
	out := make([]stores.Victim, len(names))
	for i, n := range names {
		out[i] = stores.Victim{Namespace: t.Namespace, Name: n}
	}
	return out, nil
}

// unsafeDeleteWarning is said before deletes with
// --ignore-store-read-error-with-cluster-breaking-potential. kube-apiserver
// (1.35 to 1.37) sends no warning for such a DELETE (it only annotates the
// audit event), so this one is regctl's own: what the option does, or that the
// server would have dropped it.
func unsafeDeleteWarning() string {
	if !stores.UnsafeDeleteAllowed() {
		return fmt.Sprintf("warning: `--ignore-store-read-error-with-cluster-breaking-potential` has no effect: kube-apiserver drops the option while its %s feature gate is off", features.AllowUnsafeMalformedObjectDeletion)
	}
	return "warning: objects that cannot be read are deleted unread, without preconditions, finalizers or the store's after-delete steps: this may break the cluster if other objects depend on them"
}

// deleteEach deletes the victims of each type, in the order named, saying
// what became of each.
func (o DeleteOptions) deleteEach(ctx context.Context, doomed []doomedOf, total int) error {
	do := stores.DeleteOptions{WriteOptions: stores.WriteOptions{DryRun: o.DryRun, DropUnknownFields: o.DropUnknownFields}, IgnoreStoreReadError: o.IgnoreStoreReadError}
	if o.GracePeriod >= 0 {
		do.GracePeriod = &o.GracePeriod
	}
	if !o.DryRun {
		fmt.Fprintln(o.ErrOut, stores.BypassWarning)
	}
	if o.IgnoreStoreReadError {
		fmt.Fprintln(o.ErrOut, unsafeDeleteWarning())
	}
	rep := NewReport(ReportOptions{Out: o.Out, ErrOut: o.ErrOut, Output: o.Output, DryRun: o.DryRun, Verb: "deleted", Total: total})
	for _, d := range doomed {
		kind := strings.ToLower(d.Resource.Kind)
		rep.Line = o.deletedLine(d.Target)
		err := stores.DeleteEach(ctx, d.Target, d.victims, do, func(v stores.Victim, deleted stores.Deleted, err error) error {
			switch {
			case err != nil && o.IgnoreNotFound && apierrors.IsNotFound(err):
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
func (o DeleteOptions) deletedLine(t handle.Target) func(runtime.Object, string) error {
	scope := meta.RESTScopeRoot
	if t.Resource.Namespaced {
		scope = meta.RESTScopeNamespace
	}
	kubectl := &kubectldelete.DeleteOptions{IOStreams: genericiooptions.IOStreams{Out: o.Out}, GracePeriod: int(o.GracePeriod)}
	if o.DryRun {
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
		fmt.Fprintf(o.ErrOut, "warning: %s: it stays until its finalizers are done or its grace period ends\n", strings.TrimSuffix(line.String(), "\n"))
		return nil
	}
}

// deletedName is what names a deleted object: the object the store
// returned, or, for one deleted unread, its type's kind and its name.
func deletedName(t handle.Target, v stores.Victim, d stores.Deleted) runtime.Object {
	if d.Object != nil && !d.Object.GetObjectKind().GroupVersionKind().Empty() {
		return d.Object
	}
	return render.NameOnly(t.GroupVersion().WithKind(t.Resource.Kind), v.Namespace, v.Name)
}
