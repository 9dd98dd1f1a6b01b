package stores

import (
	"context"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storedvalue"
)

// LossError refuses a write over a stored value that this release would
// lose part of: fields its types do not declare, or a storage version more
// mature than the one it writes. The store would write the object it
// decoded, without a word about what it could not decode.
type LossError struct {
	*storedvalue.Loss
}

func (e *LossError) Error() string {
	msg := "refusing to write over " + e.Loss.Error() + ": use the regctl built for the cluster's Kubernetes release"
	if len(e.Fields) > 0 && e.StoredAt == "" {
		msg += ", or pass `--drop-unknown-fields` to drop them as this release's kube-apiserver would"
	}
	return msg
}

// checkStored reads the value stored for the object stored, at the
// revision of its resourceVersion, and refuses to write over it when this
// release would lose part of it. A value changed since the store read it
// is a conflict, as the write itself would be.
func checkStored(ctx context.Context, t handle.Target, stored runtime.Object, opts WriteOptions) error {
	if storedvalue.CustomResource(t.Handle) {
		return nil
	}
	m, err := meta.Accessor(stored)
	if err != nil {
		return err
	}
	rv, err := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
	if err != nil {
		return fmt.Errorf("reading the resourceVersion of %s: %w", m.GetName(), err)
	}
	if rv <= opts.LossCheckedAt {
		return nil // this very value was checked
	}
	key, err := t.Key(m.GetNamespace(), m.GetName())
	if err != nil {
		return err
	}
	loss, modRev, err := lossAt(ctx, t, key, 0, opts)
	switch {
	case err != nil:
		return err
	case modRev != rv:
		return apierrors.NewConflict(t.Store.DefaultQualifiedResource, m.GetName(), fmt.Errorf("the object was changed while it was written"))
	case loss != nil:
		return unwritten(&LossError{Loss: loss})
	}
	return nil
}

// Loss is what this release would lose of the value of name in the
// target's namespace as etcd held it at rev (0: now) by decoding and
// writing it again (nil: nothing): fields its types do not declare, a
// storage version newer than the one it writes. A restore asks it of each
// value it would bring back.
func Loss(ctx context.Context, t handle.Target, name string, rev int64) (*storedvalue.Loss, error) {
	if storedvalue.CustomResource(t.Handle) {
		return nil, nil
	}
	key, err := t.Key(t.Namespace, name)
	if err != nil {
		return nil, err
	}
	loss, _, err := lossAt(ctx, t, key, rev, WriteOptions{})
	return loss, err
}

// lossAt reads the value at key at rev (0: now) and returns what this
// release would lose by writing over it (nil: nothing, or what opts allows
// to drop), with the revision it was last written at; 0 when there is
// none.
func lossAt(ctx context.Context, t handle.Target, key string, rev int64, opts WriteOptions) (*storedvalue.Loss, int64, error) {
	c, err := t.Client(ctx)
	if err != nil {
		return nil, 0, err
	}
	kv, err := etcdview.ValueAt(ctx, c, key, rev)
	if err != nil || kv == nil {
		return nil, 0, err
	}
	loss, err := storedvalue.Check(ctx, t.Handle, key, kv.Value)
	if err != nil {
		return nil, 0, err
	}
	if loss != nil && opts.DropUnknownFields {
		loss.Fields = nil
		if loss.StoredAt == "" {
			loss = nil
		}
	}
	return loss, kv.ModRevision, nil
}

// refusesLoss is the update transform that checks the object as stored
// (checkStored) before anything of the update is done.
func refusesLoss(t handle.Target, opts WriteOptions) rest.TransformFunc {
	return func(ctx context.Context, newObj, oldObj runtime.Object) (runtime.Object, error) {
		if err := checkStored(ctx, t, oldObj, opts); err != nil {
			return nil, err
		}
		return newObj, nil
	}
}

// deleteLoss tells whether deleting name would write over its stored value
// and lose part of it: a graceful deletion or finalizers leave the object
// in place, marked for deletion, and the store writes it back. A delete
// that removes the value loses nothing it did not mean to. The answer is
// the store's own, from a dry run of the same delete; the revision
// returned is the value's, which the delete then takes as precondition.
func deleteLoss(ctx context.Context, t handle.Target, name string, deleter rest.GracefulDeleter, options *metav1.DeleteOptions, opts WriteOptions) (int64, error) {
	if storedvalue.CustomResource(t.Handle) {
		return 0, nil
	}
	key, err := t.Key(t.Namespace, name)
	if err != nil {
		return 0, err
	}
	loss, modRev, err := lossAt(ctx, t, key, 0, opts)
	if err != nil || loss == nil {
		return 0, err
	}
	dry := options.DeepCopy()
	dry.DryRun = []string{metav1.DryRunAll}
	dry.Preconditions = &metav1.Preconditions{ResourceVersion: ptr.To(strconv.FormatInt(modRev, 10))}
	_, removed, err := deleter.Delete(RequestContext(ctx, t), name, rest.ValidateAllObjectFunc, dry)
	switch {
	case err != nil:
		return 0, err
	case !removed:
		return 0, unwritten(&LossError{Loss: loss})
	}
	return modRev, nil
}
