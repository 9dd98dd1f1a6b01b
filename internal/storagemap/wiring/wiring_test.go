package wiring

import (
	"context"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	"k8s.io/kubernetes/pkg/registry/core/configmap"
	configmapstore "k8s.io/kubernetes/pkg/registry/core/configmap/storage"

	"github.com/regctl/regctl/internal/gocode"
	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/storagemap/restoptions"
)

// configMaps is the configmaps store as the registry builds it, through
// the recording getter over a server getter that decides undecorated
// storage; nothing dials etcd.
func configMaps(t *testing.T) Of {
	t.Helper()
	getter := &restoptions.Getter{
		Delegate:   undecorated{},
		Encryption: func(schema.GroupResource) string { return "identity" },
		Preflight:  func(context.Context, storagebackend.TransportConfig) error { return nil },
	}
	storage, err := configmapstore.NewREST(getter)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := getter.Decision(schema.GroupResource{Resource: "configmaps"})
	return Of{
		Route:    routetable.Route{Path: "configmaps", Resource: "configmaps", Version: "v1", Kind: "ConfigMap", Scope: "Namespaced"},
		Provider: Provider{Value: configmapstore.NewREST},
		Storage:  storage, Store: storage.Store, Decision: d, Found: ok, EtcdPrefix: "/registry",
	}
}

type undecorated struct{}

func (undecorated) GetRESTOptions(gr schema.GroupResource, _ runtime.Object) (generic.RESTOptions, error) {
	v1 := schema.GroupVersion{Version: "v1"}
	return generic.RESTOptions{
		StorageConfig: &storagebackend.ConfigForResource{GroupResource: gr, Config: storagebackend.Config{
			Prefix: "/registry", Codec: legacyscheme.Codecs.LegacyCodec(v1), EncodeVersioner: runtime.NewMultiGroupVersioner(v1),
		}},
		Decorator: generic.UndecoratedStorage, ResourcePrefix: gr.Resource,
	}, nil
}

// TestAStoresStableWiringIsNamesOnly: what a route table holds of the
// configmaps store, from the store itself.
func TestAStoresStableWiringIsNamesOnly(t *testing.T) {
	got := Stable(configMaps(t))
	strategy := gocode.TypeName(configmap.Strategy)
	if got.Constructor != gocode.Name(configmapstore.NewREST) || got.Provider != gocode.Name(configmapstore.NewREST) {
		t.Errorf("constructor %q, provider %q", got.Constructor, got.Provider)
	}
	if len(got.Strategies) != 3 || got.Strategies["create"] != strategy || got.Strategies["delete"] != strategy {
		t.Errorf("strategies %v, want %s for create, update and delete", got.Strategies, strategy)
	}
	if !slices.Contains(got.StrategyMethods, "strategy.PrepareForCreate") || slices.Contains(got.StrategyMethods, "strategy.GenerateName") {
		t.Errorf("strategy methods %v: want those the strategy declares, not those it embeds", got.StrategyMethods)
	}
	if got.Funcs["PredicateFunc"] != gocode.Name(configmap.Matcher) || got.Funcs["NewFunc"] != gocode.Name(configmapstore.NewREST)+" closure" {
		t.Errorf("funcs %v", got.Funcs)
	}
	if _, ok := got.Funcs["KeyFunc"]; ok {
		t.Errorf("funcs %v: CompleteWithOptions' default KeyFunc is listed", got.Funcs)
	}
	if !slices.Equal(got.SelectableFields, []string{"metadata.name", "metadata.namespace"}) || len(got.Triggers) != 0 || len(got.Indexers) != 0 {
		t.Errorf("fields %v, triggers %v, indexers %v", got.SelectableFields, got.Triggers, got.Indexers)
	}
}

// TestDescribeFollowsTheServersOrder: the steps come as the server takes
// them, and the store's keys are its own functions' answers.
func TestDescribeFollowsTheServersOrder(t *testing.T) {
	p := Describe(configMaps(t), []string{"configmaps/x"}, []routetable.HTTPRoute{{Method: "GET", Path: "/api/v1/namespaces/{namespace}/configmaps/{name}", Action: "get"}})
	var steps []string
	for _, s := range p.Steps {
		steps = append(steps, s.Step)
	}
	want := "path,storage provider,REST storage,genericregistry.Store,strategy (create, update, delete),CompleteWithOptions and RESTOptionsGetter,decorator,etcd3 store,subresources,HTTP routes (InstallREST)"
	if got := strings.Join(steps, ","); got != want {
		t.Errorf("steps %s\nwant  %s", got, want)
	}
	var keys, decorator Decision
	for _, d := range p.Steps[3].Decisions {
		if d.Name == "KeyFunc" {
			keys = d
		}
	}
	for _, d := range p.Steps[6].Decisions {
		if d.Name == "decorator" {
			decorator = d
		}
	}
	if keys.Value != "/registry/configmaps/{namespace}/{name}" {
		t.Errorf("KeyFunc %+v", keys)
	}
	if !strings.HasPrefix(decorator.Value, routetable.DecoratorUndecorated) || decorator.Code != gocode.Name(generic.UndecoratedStorage) {
		t.Errorf("decorator %+v, want the server's undecorated storage", decorator)
	}
	if parts := p.Parts(); parts[0].Title != "Path: configmaps" || len(parts) != len(p.Steps) {
		t.Errorf("parts %+v", parts)
	}
}
