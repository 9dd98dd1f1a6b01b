package stores

import (
	"context"
	"fmt"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/wiring"
)

// listByKey lists by walking the keys (keys only, paged) and reading each
// object through the store's Get, filtered by the store's own predicate. It
// is the slow path, taken only when a page holds a value the store cannot
// read: each such key is reported and the walk goes on.
// The walk starts after the key after, where the store's own pages stopped.
func listByKey(ctx context.Context, w *wiring.Wiring, t Target, lo *metainternalversion.ListOptions, after string, onError func(string, error), fn func(Page) error) error {
	store := w.GenericStore(t.Path)
	c, err := w.Client(ctx)
	if err != nil {
		return err
	}
	prefix, err := w.EtcdKeyPrefix(ctx, t.Path)
	if err != nil {
		return err
	}
	pred := store.PredicateFunc(lo.LabelSelector, lo.FieldSelector)
	bad := 0
	start := prefix
	if after != "" {
		start = after + "\x00"
	}
	err = etcdview.Pages(ctx, c, prefix, start, max(lo.Limit, 1), true, func(kvs []*mvccpb.KeyValue) error {
		var items []runtime.Object
		for _, kv := range kvs {
			key := string(kv.Key)
			ns, name := splitKey(strings.TrimPrefix(key, prefix), t.Resource.Namespaced && t.Namespace == "")
			obj, err := store.Get(genericapirequest.WithNamespace(ctx, firstNonEmpty(t.Namespace, ns)), name, &metav1.GetOptions{})
			if err != nil {
				bad++
				onError(key, explainKey(ctx, w, t.Path, key, err))
				continue
			}
			if ok, err := pred.Matches(obj); err != nil || !ok {
				continue
			}
			items = append(items, obj)
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
		return fmt.Errorf("%d %s could not be read", bad, t.Path)
	}
	return nil
}

// splitKey splits what follows a store's key root: "ns/name" when the walk
// spans namespaces, "name" otherwise.
func splitKey(rest string, hasNamespace bool) (namespace, name string) {
	if hasNamespace {
		if ns, n, ok := strings.Cut(rest, "/"); ok {
			return ns, n
		}
	}
	return "", rest
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
