package stores

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/registry/rest"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/utils/ptr"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storedvalue"
)

// DeleteOptions apply to one delete.
type DeleteOptions struct {
	WriteOptions
	// GracePeriod, when set, overrides the object's own grace period.
	GracePeriod *int64
	// IgnoreStoreReadError is the server's
	// ignoreStoreReadErrorWithClusterBreakingPotential: an object whose
	// stored value cannot be decoded or decrypted is deleted unread. It
	// takes effect only with the AllowUnsafeMalformedObjectDeletion gate on
	// (see UnsafeDeleteAllowed).
	IgnoreStoreReadError bool
}

// UnsafeDeleteAllowed tells whether IgnoreStoreReadError takes effect: the
// server's DELETE handler drops the option while its gate is off, and the
// stores are given their unsafe deleter only with it on.
func UnsafeDeleteAllowed() bool {
	return utilfeature.DefaultFeatureGate.Enabled(features.AllowUnsafeMalformedObjectDeletion)
}

// UnsafeDeleteFlags are what a delete of an object that cannot be read
// takes, for messages: the option, and the gate while it is off (its
// default before Kubernetes 1.37).
func UnsafeDeleteFlags() string {
	if UnsafeDeleteAllowed() {
		return "`--ignore-store-read-error-with-cluster-breaking-potential`"
	}
	return fmt.Sprintf("`--ignore-store-read-error-with-cluster-breaking-potential` with `--feature-gates=%s=true`", features.AllowUnsafeMalformedObjectDeletion)
}

// UnsafeDeleteCollectionError is the server's refusal of the option on a
// DELETE of a collection. The handler (DeleteCollection in
// k8s.io/apiserver/pkg/endpoints/handlers/delete.go) builds it inline, so
// its text is repeated here; regctl refuses it for objects chosen with a
// selector or all of them, which a delete of a collection would be.
func UnsafeDeleteCollectionError() error {
	return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", field.ErrorList{
		field.Invalid(field.NewPath("ignoreStoreReadErrorWithClusterBreakingPotential"), true, "is not allowed with DELETECOLLECTION, try again after removing the option"),
	})
}

// Deleted is what one delete did.
type Deleted struct {
	// Object is the object in the served version: as the store left it
	// when it remains marked for deletion, otherwise as it was when the
	// store deleted it.
	Object runtime.Object
	// Removed is false when the object remains, marked for deletion.
	Removed bool
}

// Delete deletes an object through the target's store, with the resource's
// graceful deletion and finalizers: a pod on a node with a grace period gets
// a deletionTimestamp, a namespace goes to Terminating; a service's cluster
// IP and node ports are released. The object is looked at as the store
// reads it in the delete itself, so what is returned, and whether the
// cluster IP allocator is readied, follow the object that was deleted, not
// an earlier read of it.
//
// With IgnoreStoreReadError and the gate on, the delete goes through the
// store's unsafe deleter, as the server's DELETE handler sends it: an
// object that cannot be read is removed from etcd without preconditions,
// finalizers, graceful deletion or the store's after-delete steps (a
// service's cluster IP is not released); a readable one is refused.
//
// A delete that would write the object back, marked for deletion, over a
// stored value this release would lose part of is refused (LossError).
func Delete(ctx context.Context, t handle.Target, name string, opts DeleteOptions) (Deleted, error) {
	deleter, ok := t.Storage.(rest.GracefulDeleter)
	if !ok {
		return Deleted{}, unwritten(fmt.Errorf("%s does not accept delete", t.Path))
	}
	options, err := deleteOptions(opts)
	if err != nil {
		return Deleted{}, unwritten(err)
	}
	unsafe := ptr.Deref(options.IgnoreStoreReadErrorWithClusterBreakingPotential, false)
	if unsafe {
		p, ok := t.Storage.(rest.CorruptObjectDeleterProvider)
		if !ok || p.GetCorruptObjDeleter() == nil {
			return Deleted{}, unwritten(fmt.Errorf("%s has no unsafe deleter: it cannot delete an object it cannot read", t.Path))
		}
		deleter = p.GetCorruptObjDeleter()
	}
	if !unsafe {
		rev, err := deleteLoss(ctx, t, name, deleter, options, opts.WriteOptions)
		if err != nil {
			return Deleted{}, err
		}
		if rev != 0 && options.Preconditions == nil {
			// The value checked is the one deleted.
			options.Preconditions = &metav1.Preconditions{ResourceVersion: ptr.To(strconv.FormatInt(rev, 10))}
		}
	}
	var last runtime.Object
	validate := func(ctx context.Context, obj runtime.Object) error {
		// The store releases a service's cluster IP after the delete, and
		// only through a ready allocator.
		if usesClusterIP(obj) && !opts.DryRun {
			if err := t.ReadyAllocators(ctx); err != nil {
				return unwritten(err)
			}
		}
		last = obj.DeepCopyObject()
		return nil
	}
	out, removed, err := deleter.Delete(RequestContext(ctx, t), name, validate, options)
	if err != nil {
		// What validate refused is about a value the store did read.
		var refusedHere *unwrittenError
		if !unsafe && !errors.As(err, &refusedHere) && unreadable(ctx, err) {
			err = explain(ctx, t, name, err)
			var missing *storedvalue.KeyError
			if errors.As(err, &missing) {
				// The key may be lost for good: the value is named,
				// and the way to delete it anyway.
				if key, kerr := t.Key(t.Namespace, name); kerr == nil {
					err = fmt.Errorf("reading %s: %w", key, err)
				}
			}
			return Deleted{}, fmt.Errorf("%w; deleting it unread takes %s", err, UnsafeDeleteFlags())
		}
		return Deleted{}, err
	}
	// Most stores answer a delete with a Status, not the object.
	if _, isStatus := out.(*metav1.Status); isStatus || out == nil {
		out = last
	}
	if out == nil {
		return Deleted{Removed: removed}, nil
	}
	ext, err := ToExternal(t, out)
	return Deleted{Object: ext, Removed: removed}, err
}

// deleteOptions are the options the server's DELETE handler hands the
// store for opts, checked as it checks them: the unsafe option is dropped
// while the gate is off, and refused beside a dry run or a grace period.
func deleteOptions(opts DeleteOptions) (*metav1.DeleteOptions, error) {
	options := &metav1.DeleteOptions{GracePeriodSeconds: opts.GracePeriod, DryRun: opts.dryRun()}
	if opts.IgnoreStoreReadError && UnsafeDeleteAllowed() {
		options.IgnoreStoreReadErrorWithClusterBreakingPotential = ptr.To(true)
	}
	if errs := validation.ValidateDeleteOptions(options); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", errs)
	}
	return options, nil
}

// Victim is an object to delete.
type Victim struct{ Namespace, Name string }

// Victims are the objects of the target the label selector matches, as its
// store lists them.
func Victims(ctx context.Context, t handle.Target, selector string) ([]Victim, error) {
	var out []Victim
	err := List(ctx, t, ListOptions{LabelSelector: selector, ChunkSize: 500}, func(p Page) error {
		for _, item := range p.Items {
			m, err := meta.Accessor(item)
			if err != nil {
				return err
			}
			out = append(out, Victim{m.GetNamespace(), m.GetName()})
		}
		return nil
	})
	return out, err
}

// DeleteEach deletes the victims one at a time, as the server does for
// kubectl's delete, which sends one DELETE per object (the store's
// DeleteCollection serves a DELETE of the collection, which kubectl never
// sends). It hands each outcome to report: a refused or failed delete does
// not stop the others; an interrupt stops before the next, and an error of
// report stops at once.
func DeleteEach(ctx context.Context, t handle.Target, victims []Victim, opts DeleteOptions, report func(Victim, Deleted, error) error) error {
	for _, v := range victims {
		if ctx.Err() != nil {
			return nil
		}
		vt := t
		vt.Namespace = v.Namespace
		d, err := Delete(ctx, vt, v.Name, opts)
		if err := report(v, d, err); err != nil {
			return err
		}
	}
	return nil
}
