package stores

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/wiring"
)

// ValidateCreate runs on obj, which it changes, what the target's store runs
// on a new object before it writes: system fields and generateName, the
// store's BeginCreate in dry run (a service's IP family defaults), the
// strategy's PrepareForCreate, Validate and metadata validation. It reads
// and writes nothing, so a manifest can be checked whole before its first
// write; what depends on etcd (AlreadyExists, the namespace) is left to
// Create.
func ValidateCreate(ctx context.Context, w *wiring.Wiring, t Target, obj runtime.Object) error {
	if _, ok := w.Stores[t.Path].(rest.Creater); !ok {
		return fmt.Errorf("%s does not accept create", t.Path)
	}
	if svc, ok := obj.(*api.Service); ok && needsClusterIP(svc) {
		return errClusterIP
	}
	store := ownStore(w, t.Path)
	if store == nil {
		// The path creates through another resource's store (bindings,
		// pods/eviction): its checks run in its own Create.
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	rest.FillObjectMetaSystemFields(m)
	if m.GetGenerateName() != "" && m.GetName() == "" {
		m.SetName(store.CreateStrategy.GenerateName(m.GetGenerateName()))
	}
	ctx = t.context(ctx)
	if store.BeginCreate != nil {
		finish, err := store.BeginCreate(ctx, obj, &metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return err
		}
		defer finish(ctx, false)
	}
	return rest.BeforeCreate(store.CreateStrategy, ctx, obj)
}

// ownStore is the generic store that path is, nil when the path writes
// through another resource's store or none.
func ownStore(w *wiring.Wiring, path string) *genericregistry.Store {
	r, ok := route(w, path)
	if !ok || r.Store != routetable.StoreOwn {
		return nil
	}
	return w.GenericStore(path)
}

// route is the route table's record of path.
func route(w *wiring.Wiring, path string) (routetable.Route, bool) {
	for _, r := range w.Table.Routes {
		if r.Path == path {
			return r, true
		}
	}
	return routetable.Route{}, false
}
