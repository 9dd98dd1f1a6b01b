package stores

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/regctl/regctl/internal/handle"
)

// GetInternal reads one object through the target's store and returns it as
// the store holds it, in the internal version: what the store's
// TableConvertor prints. ToExternal turns it into what Get returns.
func GetInternal(ctx context.Context, t handle.Target, name string) (runtime.Object, error) {
	getter, ok := t.Storage.(rest.Getter)
	if !ok {
		return nil, fmt.Errorf("%s cannot be read: it has no getter", t.Path)
	}
	obj, err := getter.Get(RequestContext(ctx, t), name, &metav1.GetOptions{})
	if err != nil {
		return nil, explain(ctx, t, name, err)
	}
	return obj, nil
}

// GetInternalAt is GetInternal as the object was at etcd revision rev. The
// store's Get reads only the latest value (a resourceVersion is a minimum
// to it), so this is the store's List of that one name at exactly rev: the
// same key, transformer, codec and decorator. An object that did not exist
// then is NotFound.
func GetInternalAt(ctx context.Context, t handle.Target, name string, rev int64) (runtime.Object, error) {
	if t.Store == nil {
		return nil, fmt.Errorf("%s is not stored in etcd", t.Path)
	}
	lo, err := InternalListOptions(t, ListOptions{Revision: rev})
	if err != nil {
		return nil, err
	}
	lo.FieldSelector = fields.OneTermEqualSelector("metadata.name", name)
	list, err := t.Store.List(RequestContext(ctx, t), lo)
	if err != nil {
		return nil, explainAt(ctx, t, name, rev, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		gr := t.Store.DefaultQualifiedResource
		return nil, apierrors.NewNotFound(gr, name)
	}
	return items[0], nil
}

// WalkedToEnd tells whether a List that returned err read all the way to
// the end of the target's objects, so that what it handed out is the whole
// list: when err is nil, or when err only sums up the values it could not
// read after reporting each of them to ListOptions.OnError. Anything else
// (a timeout, a cancelled context, an etcd error, an error of the page
// callback) stopped the walk early.
func WalkedToEnd(err error) bool {
	var unreadable *UnreadableError
	return err == nil || errors.As(err, &unreadable)
}

// UnreadableError ends a list that reached its end with values it could not
// read, each already reported.
type UnreadableError struct {
	Count int
	Path  string
}

func (e *UnreadableError) Error() string {
	return fmt.Sprintf("%d %s could not be read", e.Count, e.Path)
}
