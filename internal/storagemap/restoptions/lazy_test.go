package restoptions

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	api "k8s.io/kubernetes/pkg/apis/core"
	configmapstore "k8s.io/kubernetes/pkg/registry/core/configmap/storage"

	"github.com/regctl/regctl/internal/etcdview/embedded"
	"github.com/regctl/regctl/internal/logs/logstest"
)

func TestMain(m *testing.M) { logstest.Main(m) }

// configMaps is the server's config map store, built through a getter
// whose resources are stored in etcd, away from the main servers, and
// the number of times the getter checked that etcd before dialing it.
func configMaps(t *testing.T, etcd string, preflight error) (*configmapstore.REST, *Getter, *int) {
	t.Helper()
	checks := 0
	getter := &Getter{
		Delegate:    serverGetter{decorator: generic.UndecoratedStorage, servers: []string{etcd}},
		MainServers: []string{"https://etcd-main:2379"},
		Encryption:  func(schema.GroupResource) string { return "identity" },
		Timeout:     10 * time.Second,
		Preflight: func(_ context.Context, tc storagebackend.TransportConfig) error {
			checks++
			if !slices.Equal(tc.ServerList, []string{etcd}) {
				t.Errorf("the preflight checks %v, want %s", tc.ServerList, etcd)
			}
			return preflight
		},
	}
	store, err := configmapstore.NewREST(getter)
	if err != nil {
		t.Fatal(err)
	}
	return store, getter, &checks
}

// inShop is what a request to create a config map in shop carries to its
// store: its declarative validation reads the request info.
func inShop() context.Context {
	return genericapirequest.WithRequestInfo(genericapirequest.WithNamespace(genericapirequest.NewContext(), "shop"),
		&genericapirequest.RequestInfo{IsResourceRequest: true, Verb: "create", APIVersion: "v1", Resource: "configmaps", Namespace: "shop"})
}

// TestStorageIsMadeOnFirstUse, on a real etcd: building a store records
// what it handed its decorator and dials nothing; its first request
// checks the etcd and makes the server's undecorated storage, which writes
// to the key the store's key function names; later requests reuse it.
func TestStorageIsMadeOnFirstUse(t *testing.T) {
	e, err := embedded.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	store, getter, checks := configMaps(t, e.ClientURL, nil)
	defer store.Destroy()

	d, ok := getter.Decision(schema.GroupResource{Resource: "configmaps"})
	if !ok || d.Call == nil || d.Call.ResourcePrefix != "/configmaps" || d.Call.KeyFunc == nil || d.Call.AttrFunc == nil {
		t.Fatalf("the decorator's call is not recorded: %+v", d.Call)
	}
	if !slices.Equal(d.EtcdServers, []string{e.ClientURL}) {
		t.Errorf("etcd servers %v, want %s, not the main ones", d.EtcdServers, e.ClientURL)
	}
	if *checks != 0 {
		t.Fatalf("building the store checked its etcd %d times", *checks)
	}

	cm := &api.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "shop"}, Data: map[string]string{"k": "v"}}
	if _, err := store.Create(inShop(), cm, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Get(inShop(), "settings", &metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if *checks != 1 {
		t.Errorf("the etcd was checked %d times, want once, before the first request", *checks)
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{e.ClientURL}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	resp, err := client.Get(context.Background(), "/registry/configmaps/shop/settings")
	if err != nil || len(resp.Kvs) != 1 || !strings.Contains(string(resp.Kvs[0].Value), `"k":"v"`) {
		t.Errorf("the config map is not stored under its key, as JSON: %v, %v", resp, err)
	}
}

// TestStorageNotMadeIsAnError: an etcd the preflight refuses is each
// request's error, and a store destroyed before its first request (the
// map closed) says so rather than dialing.
func TestStorageNotMadeIsAnError(t *testing.T) {
	down := errors.New("etcd-events is down")
	store, _, _ := configMaps(t, "https://etcd-events:2379", down)
	if _, err := store.Get(inShop(), "settings", &metav1.GetOptions{}); !errors.Is(err, down) {
		t.Errorf("with its etcd down: %v, want %v", err, down)
	}
	store.Destroy()

	store, _, checks := configMaps(t, "https://etcd-events:2379", nil)
	store.Destroy()
	if _, err := store.Get(inShop(), "settings", &metav1.GetOptions{}); err == nil || !strings.Contains(err.Error(), errDestroyed.Error()) || *checks != 0 {
		t.Errorf("after the map was closed: %v, %d checks of its etcd", err, *checks)
	}
}

// TestACustomResourceIsKnownByItsCRD: a store that passes no example is a
// custom resource's; one the CRDs read do not name is refused.
func TestACustomResourceIsKnownByItsCRD(t *testing.T) {
	g := &Getter{Delegate: serverGetter{decorator: generic.UndecoratedStorage}, Encryption: func(schema.GroupResource) string { return "" },
		CustomResource: func(schema.GroupResource) (runtime.Object, string, bool) { return nil, "", false }}
	widgets := schema.GroupResource{Group: "example.com", Resource: "widgets"}
	if _, err := g.GetRESTOptions(widgets, nil); err == nil || err.Error() != "widgets.example.com is not a custom resource of a CRD regctl read" {
		t.Errorf("a resource no CRD serves: %v", err)
	}
	if _, ok := g.Decision(widgets); ok {
		t.Error("a decision is recorded for it")
	}
	if name := decoratorName(lazyUndecorated(0, nil, nil)); !strings.Contains(name, "lazyUndecorated") {
		t.Errorf("a decorator neither the cacher nor undecorated is named %q, want its function's name", name)
	}
}
