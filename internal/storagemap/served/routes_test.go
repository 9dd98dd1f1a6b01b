package served

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	appsrest "k8s.io/kubernetes/pkg/registry/apps/rest"

	"github.com/regctl/regctl/internal/gocode"
	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/storagemap/reach"
)

// TestRoutePathsAreKubectlsNames: resource.group for a preferred version,
// resource.version.group for the others, core resources by name, a
// subresource after its resource.
func TestRoutePathsAreKubectlsNames(t *testing.T) {
	for _, c := range []struct {
		v    Version
		p    string
		want string
	}{
		{Version{GV: schema.GroupVersion{Version: "v1"}, Preferred: true}, "pods/status", "pods/status"},
		{Version{GV: schema.GroupVersion{Group: "apps", Version: "v1"}, Preferred: true}, "deployments/scale", "deployments.apps/scale"},
		{Version{GV: schema.GroupVersion{Group: "autoscaling", Version: "v1"}}, "horizontalpodautoscalers", "horizontalpodautoscalers.v1.autoscaling"},
	} {
		if got := RoutePath(c.v, c.p); got != c.want {
			t.Errorf("RoutePath(%v, %s) = %s, want %s", c.v.GV, c.p, got, c.want)
		}
	}
}

// reachedOf is how each path of v reaches etcd, by route path, as the map
// records it.
func reachedOf(v Version) map[string]reach.Path {
	out := map[string]reach.Path{}
	for p, r := range reach.Of(v.Installed()) {
		if r.SharesWith != "" {
			r.SharesWith = RoutePath(v, r.SharesWith)
		}
		out[RoutePath(v, p)] = r
	}
	return out
}

func route(t *testing.T, routes []routetable.Route, path string) routetable.Route {
	t.Helper()
	i := slices.IndexFunc(routes, func(r routetable.Route) bool { return r.Path == path })
	if i < 0 {
		t.Fatalf("no route %s", path)
	}
	return routes[i]
}

// TestRoutesJoinDiscoveryReachAndDecisions: a route is the installer's
// discovery of its path, how the path reaches etcd, and what the server's
// getter decided for the store it reaches; a path whose store was not
// decided through the getter has neither key prefix nor decorator.
func TestRoutesJoinDiscoveryReachAndDecisions(t *testing.T) {
	v, _, getter := appsV1(t)
	if err := NewInstaller(&Models{}, nil, nil).Install(&v, nil); err != nil {
		t.Fatal(err)
	}
	routes := Routes([]Version{v}, reachedOf(v), getter)
	if len(routes) != len(v.Resources) || !slices.IsSortedFunc(routes, func(a, b routetable.Route) int { return strings.Compare(a.Path, b.Path) }) {
		t.Fatalf("%d routes for %d paths, or not sorted by path", len(routes), len(v.Resources))
	}
	d := route(t, routes, "deployments.apps")
	if d.Resource != "deployments" || d.Group != "apps" || d.Version != "v1" || d.Kind != "Deployment" || d.Scope != "Namespaced" ||
		!slices.Contains(d.Verbs, "watch") || !slices.Equal(d.ShortNames, []string{"deploy"}) || d.StorageVersionHash == "" ||
		d.Storage != "*k8s.io/kubernetes/pkg/registry/apps/deployment/storage.REST" {
		t.Errorf("deployments.apps from discovery: %+v", d)
	}
	if d.Store != routetable.StoreOwn || d.KeyPrefix != "/registry/deployments/" || d.Decorator != routetable.DecoratorCacher ||
		d.StorageVersion != "apps/v1" || d.MediaType != "application/vnd.kubernetes.protobuf" || d.Encryption != "identity" || d.EtcdServers != nil {
		t.Errorf("deployments.apps from the getter: %+v", d)
	}
	scale := route(t, routes, "deployments.apps/scale")
	if scale.Subresource != "scale" || scale.Store != routetable.StoreShared || scale.SharesWith != "deployments.apps" ||
		scale.KeyPrefix != d.KeyPrefix || scale.KindGroupVersion != "autoscaling/v1" {
		t.Errorf("deployments.apps/scale: %+v", scale)
	}
	if d := route(t, Routes([]Version{v}, map[string]reach.Path{}, getter), "deployments.apps"); d.KeyPrefix != "" || d.Decorator != routetable.DecoratorNone {
		t.Errorf("a path reaching no store: key prefix %q, decorator %q", d.KeyPrefix, d.Decorator)
	}
	v.Preferred = false
	if r := Routes([]Version{v}, nil, getter); r[0].Path != "controllerrevisions.v1.apps" {
		t.Errorf("a version not preferred: %s, want its version in its paths", r[0].Path)
	}
}

// TestWiringIsEachPathsOwnStore: a subresource's wiring is its own copy of
// its resource's store, with its own strategies.
func TestWiringIsEachPathsOwnStore(t *testing.T) {
	v, _, getter := appsV1(t)
	if err := NewInstaller(&Models{}, nil, nil).Install(&v, nil); err != nil {
		t.Fatal(err)
	}
	reached := reachedOf(v)
	routes := Routes([]Version{v}, reached, getter)
	Wire(routes, []Version{v}, reached, getter)
	d, status := route(t, routes, "deployments.apps").Wiring, route(t, routes, "deployments.apps/status").Wiring
	if d.Provider != gocode.TypeName(appsrest.StorageProvider{}) || d.Constructor == "" || !slices.Contains(d.SelectableFields, "metadata.name") {
		t.Errorf("deployments.apps wiring: %+v", d)
	}
	if status.Strategies["update"] == "" || status.Strategies["update"] == d.Strategies["update"] {
		t.Errorf("deployments.apps/status updates with %q, deployments.apps with %q: want the status strategy", status.Strategies["update"], d.Strategies["update"])
	}
}

type adapter struct{ of any }

func (a adapter) Upstream() any { return a.of }

// TestTypeNamesAreThoseOfTheServersStorage: with the package path, and an
// adapter of regctl's named by what it adapts.
func TestTypeNamesAreThoseOfTheServersStorage(t *testing.T) {
	const store = "k8s.io/apiserver/pkg/registry/generic/registry.Store"
	if got := TypeName(adapter{&genericregistry.Store{}}); got != "*"+store {
		t.Errorf("an adapter is named %s, want *%s", got, store)
	}
	if got := TypeName(genericregistry.Store{}); got != store {
		t.Errorf("a value is named %s", got)
	}
}
