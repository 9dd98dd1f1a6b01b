package wiring

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/registry/core/componentstatus"
	"k8s.io/kubernetes/pkg/registry/core/configmap"
	pvstore "k8s.io/kubernetes/pkg/registry/core/persistentvolume/storage"

	"github.com/regctl/regctl/internal/gocode"
	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/storagemap/restoptions"
)

func stepNames(p Path) []string {
	var out []string
	for _, s := range p.Steps {
		out = append(out, s.Step)
	}
	return out
}

func decision(s Step, name string) Decision {
	i := slices.IndexFunc(s.Decisions, func(d Decision) bool { return d.Name == name })
	if i < 0 {
		return Decision{}
	}
	return s.Decisions[i]
}

// TestAPathThatReachesNoStoreStopsAtItsStorage: componentstatuses, or an
// APIService's route with no storage at all, has no store to describe,
// and a table names its provider alone.
func TestAPathThatReachesNoStoreStopsAtItsStorage(t *testing.T) {
	cs := Of{
		Route:    routetable.Route{Path: "componentstatuses", Version: "v1", Kind: "ComponentStatus", Scope: "Cluster", Verbs: []string{"get", "list"}, Store: routetable.StoreNone},
		Provider: Provider{Value: componentstatus.NewStorage},
		Storage:  componentstatus.NewStorage(nil),
	}
	p := Describe(cs, nil, nil)
	if got := strings.Join(stepNames(p), ","); got != "path,storage provider,REST storage" {
		t.Errorf("steps %s", got)
	}
	if d := decision(p.Steps[0], "verbs"); d.Value != "get,list" {
		t.Errorf("verbs %+v", d)
	}
	if d := decision(p.Steps[1], "provider"); d.Code != gocode.Name(componentstatus.NewStorage) || d.At == "" {
		t.Errorf("provider %+v, want the function and where it is", d)
	}
	if w := Stable(cs); w.Provider != gocode.Name(componentstatus.NewStorage) || w.Constructor != "" || w.Strategies != nil {
		t.Errorf("stable wiring %+v, want the provider alone", w)
	}

	proxied := Describe(Of{Route: routetable.Route{Path: "v1beta1.metrics.k8s.io", Group: "metrics.k8s.io", Version: "v1beta1", Store: routetable.StoreNone, ProxiedTo: "kube-system/metrics-server:443"}}, nil, nil)
	if got := strings.Join(stepNames(proxied), ","); got != "path,storage provider" {
		t.Errorf("proxied steps %s", got)
	}
	if d := decision(proxied.Steps[0], "proxied to"); d.Value != "kube-system/metrics-server:443" {
		t.Errorf("proxied to %+v", d)
	}
	if d := decision(proxied.Steps[1], "provider"); d.Value != "<none>" {
		t.Errorf("provider %+v", d)
	}
}

// otherUpdates is a strategy held by value, as a custom resource's is.
type otherUpdates struct {
	rest.RESTUpdateStrategy
	n int
}

// TestAStrategyIsOneStepWhateverItsRoles: a strategy object is one step
// naming its roles; one held by value is the same one when its fields
// are.
func TestAStrategyIsOneStepWhateverItsRoles(t *testing.T) {
	w := configMaps(t)
	store := *w.Store
	store.UpdateStrategy = otherUpdates{configmap.Strategy, 1}
	var steps []string
	for _, s := range strategySteps(&store) {
		steps = append(steps, s.Step)
	}
	if !slices.Equal(steps, []string{"strategy (create, delete)", "strategy (update)"}) {
		t.Errorf("strategy steps %v", steps)
	}
	if !same(otherUpdates{configmap.Strategy, 1}, otherUpdates{configmap.Strategy, 1}) || same(otherUpdates{configmap.Strategy, 1}, otherUpdates{configmap.Strategy, 2}) {
		t.Error("strategies held by value: the same when their fields are, else not")
	}
	if same(&otherUpdates{configmap.Strategy, 1}, &otherUpdates{configmap.Strategy, 1}) || same(configmap.Strategy, otherUpdates{configmap.Strategy, 1}) {
		t.Error("two pointers, or two types, are two strategies")
	}
}

// TestAClusterScopedKeyHasNoNamespace: the key patterns are the store's
// own functions' answers, under --etcd-prefix.
func TestAClusterScopedKeyHasNoNamespace(t *testing.T) {
	getter := &restoptions.Getter{Delegate: undecorated{}, Encryption: func(schema.GroupResource) string { return "identity" }}
	storage, _, err := pvstore.NewREST(getter)
	if err != nil {
		t.Fatal(err)
	}
	w := Of{Route: routetable.Route{Path: "persistentvolumes", Scope: "Cluster"}, Store: storage.Store, EtcdPrefix: "/prefix"}
	if got := keyPattern(w, false); got != "/prefix/persistentvolumes/{name}" {
		t.Errorf("key %s", got)
	}
	if got := keyPattern(w, true); got != "/prefix/persistentvolumes" {
		t.Errorf("key root %s", got)
	}
}

// TestPartsPutCodeOnALineOfItsOwn: a decision with a value and code is two
// rows, code with where it is; a step with nothing decided says so.
func TestPartsPutCodeOnALineOfItsOwn(t *testing.T) {
	p := Path{Path: "pods", Steps: []Step{
		{Step: "path", Decisions: []Decision{{Name: "kind", Value: "Pod"}}},
		{Step: "decorator", Decisions: []Decision{{Name: "decorator", Value: "cacher", Code: "registry.StorageWithCacher", At: "store.go:1"}, {Name: "KeyFunc", Code: "f"}}},
		{Step: "empty"},
	}}
	parts := p.Parts()
	want := []Part{
		{Title: "Path: pods", Rows: [][]string{{"  kind:", "Pod"}}},
		{Title: "decorator:", Rows: [][]string{{"  decorator:", "cacher"}, {"", "registry.StorageWithCacher (store.go:1)"}, {"  KeyFunc:", "f"}}},
		{Title: "empty:", Rows: [][]string{{"  <none>"}}},
	}
	if len(parts) != len(want) {
		t.Fatalf("parts %+v", parts)
	}
	for i := range want {
		if parts[i].Title != want[i].Title || !slices.EqualFunc(parts[i].Rows, want[i].Rows, slices.Equal[[]string]) {
			t.Errorf("part %d: %+v\nwant %+v", i, parts[i], want[i])
		}
	}
}
