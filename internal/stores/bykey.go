package stores

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/storage"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/storedvalue"
)

// listByKey lists by walking the keys (keys only, paged) and reading each
// object through the store's own storage, filtered by the store's own
// predicate. It is the slow path, taken only when a page holds a value the
// store cannot read: each such key is reported and the walk goes on.
//
// The walk starts after the key after, where the store's own pages stopped,
// and reads every key at rev, the revision those pages were read at (0: the
// current one), so the result is the list the store would have returned.
func listByKey(ctx context.Context, t Target, lo *metainternalversion.ListOptions, after string, rev int64, onError func(string, error), fn func(Page) error) error {
	store := t.Store
	c, err := t.Client(ctx)
	if err != nil {
		return err
	}
	prefix, err := t.KeyPrefix(t.Namespace)
	if err != nil {
		return err
	}
	if rev == 0 {
		if rev, err = etcdview.Revision(ctx, c); err != nil {
			return err
		}
	}
	pred := store.PredicateFunc(lo.LabelSelector, lo.FieldSelector)
	bad := 0
	start := prefix
	if after != "" {
		start = after + "\x00"
	}
	err = etcdview.PagesAt(ctx, c, prefix, start, rev, max(lo.Limit, 1), true, func(kvs []*mvccpb.KeyValue) error {
		var items []runtime.Object
		for _, kv := range kvs {
			key := string(kv.Key)
			obj, err := readAt(ctx, store, prefix, key, rev)
			if err != nil {
				if !unreadable(ctx, err) {
					return fmt.Errorf("reading %s: %w", key, err)
				}
				err = explainKey(ctx, t.Handle, key, rev, err)
				var missing *storedvalue.KeyError
				if errors.As(err, &missing) {
					// Every value so encrypted fails alike: said once.
					return err
				}
				bad++
				onError(key, err)
				continue
			}
			ok, err := pred.Matches(obj)
			if err != nil {
				return fmt.Errorf("matching %s against the selectors: %w", key, err)
			}
			if ok {
				items = append(items, obj)
			}
		}
		list := store.NewListFunc()
		if err := meta.SetList(list, items); err != nil {
			return err
		}
		return fn(Page{List: list, Items: items})
	})
	if err != nil {
		return err
	}
	if bad > 0 {
		return &UnreadableError{Count: bad, Path: t.Path}
	}
	return nil
}

// readAt reads the one object stored at key as it was at revision rev,
// through the store's own storage (its transformer and codec): a list of
// one item that starts at key, as a continued list would.
func readAt(ctx context.Context, store *genericregistry.Store, prefix, key string, rev int64) (runtime.Object, error) {
	token, err := storage.EncodeContinue(key, prefix, rev)
	if err != nil {
		return nil, err
	}
	list := store.NewListFunc()
	opts := storage.ListOptions{
		Recursive: true,
		Predicate: storage.SelectionPredicate{Label: labels.Everything(), Field: fields.Everything(), Limit: 1, Continue: token},
	}
	if err := store.Storage.Storage.GetList(ctx, store.KeyRootFunc(ctx), opts, list); err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	if len(items) != 1 {
		return nil, fmt.Errorf("%s was not found at revision %d", key, rev)
	}
	return items[0], nil
}
