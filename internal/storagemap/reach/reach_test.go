package reach

import (
	"testing"

	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"

	"github.com/regctl/regctl/internal/routetable"
)

type etcdStorage struct{ storage.Interface }

// statusREST holds its own copy of its resource's store, as
// pods/status does.
type statusREST struct {
	rest.Storage
	store *genericregistry.Store
}

// TestSubresourcesShareTheirResourcesStore: a resource owns the store it
// is; a subresource holding a copy shares it, and StoreIn is its copy;
// a path that reaches no store stores nothing.
func TestSubresourcesShareTheirResourcesStore(t *testing.T) {
	pods := &genericregistry.Store{}
	pods.DefaultQualifiedResource.Resource = "pods"
	pods.Storage.Storage = &etcdStorage{}
	status := *pods
	other := &genericregistry.Store{}
	other.DefaultQualifiedResource.Resource = "other"
	other.Storage.Storage = &etcdStorage{}

	stores := map[string]rest.Storage{
		"pods":        pods,
		"pods/status": &statusREST{store: &status},
		"pods/log":    &statusREST{},
	}
	got := Of(stores)
	if o := got["pods"]; o.Kind != routetable.StoreOwn || o.Store != pods {
		t.Errorf("pods: %+v", o)
	}
	if o := got["pods/status"]; o.Kind != routetable.StoreShared || o.SharesWith != "pods" || o.Store != pods {
		t.Errorf("pods/status: %+v", o)
	}
	if o := got["pods/log"]; o.Kind != routetable.StoreNone {
		t.Errorf("pods/log: %+v", o)
	}
	if r := StoreIn(stores["pods/status"], pods); r != &status {
		t.Errorf("StoreIn(pods/status) = %p, want its own copy %p", r, &status)
	}
	if StoreIn(stores["pods/log"], pods) != pods || StoreIn(stores["pods/status"], other) != other || StoreIn(pods, nil) != nil {
		t.Error("StoreIn: want the store itself when the storage holds no copy of it, nil for none")
	}
}

// The shapes of the core group's storage: a REST embedding its store
// (pods), holding it in a field (namespaces), and a wrapper of another
// resource's REST (bindings, pods/binding: BindingREST holds the pods
// store).
type (
	embeds struct{ *genericregistry.Store }
	holds  struct {
		rest.Storage
		store *genericregistry.Store
	}
	bindingREST struct{ store *genericregistry.Store }
	wraps       struct {
		rest.Storage
		binding *bindingREST
	}
)

func storeOf(resource string) *genericregistry.Store {
	s := &genericregistry.Store{}
	s.DefaultQualifiedResource.Resource = resource
	s.Storage.Storage = &etcdStorage{}
	return s
}

// TestAPathSharesTheStoreItReaches: a resource owns its store however it
// holds it; a resource that writes through another's store shares that
// one, and a subresource its resource's.
func TestAPathSharesTheStoreItReaches(t *testing.T) {
	pods, namespaces := storeOf("pods"), storeOf("namespaces")
	got := Of(map[string]rest.Storage{
		"pods":                &embeds{pods},
		"pods/binding":        &wraps{binding: &bindingREST{pods}},
		"bindings":            &wraps{binding: &bindingREST{pods}},
		"namespaces":          &holds{store: namespaces},
		"namespaces/finalize": &holds{store: namespaces},
	})
	for path, want := range map[string]Path{
		"pods":                {Kind: routetable.StoreOwn, Store: pods},
		"pods/binding":        {Kind: routetable.StoreShared, SharesWith: "pods", Store: pods},
		"bindings":            {Kind: routetable.StoreShared, SharesWith: "pods", Store: pods},
		"namespaces":          {Kind: routetable.StoreOwn, Store: namespaces},
		"namespaces/finalize": {Kind: routetable.StoreShared, SharesWith: "namespaces", Store: namespaces},
	} {
		if got[path] != want {
			t.Errorf("%s: %+v, want %+v", path, got[path], want)
		}
	}
}
