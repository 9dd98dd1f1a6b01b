package agreement

import (
	"context"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/test/apiserver"
)

var widgets = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

// TestExtensionServersAgreeWithKubeAPIServer creates a CRD, custom
// resources and an APIService backed by a service through a real
// kube-apiserver, builds regctl's map on the same etcd, and holds the
// apiextensions, aggregator and custom resource paths to the server's:
// discovery, storage decisions, keys, names; and building the map, which
// reads the CRDs and APIServices, writes nothing.
func TestExtensionServersAgreeWithKubeAPIServer(t *testing.T) {
	t.Parallel()
	s := apiserver.Start(t)
	crd := apiserver.CreateWidgetsCRD(t, s)
	ctx := context.Background()
	if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct{ version, name string }{{"v1", "alpha"}, {"v1beta1", "beta"}} {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/" + w.version, "kind": "Widget",
			"metadata": map[string]any{"name": w.name},
			"spec":     map[string]any{"size": "large"},
		}}
		gvr := widgets
		gvr.Version = w.version
		if _, err := s.Dynamic.Resource(gvr).Namespace("shop").Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating widget %s: %v", w.name, err)
		}
	}
	metrics := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": "v1beta1.metrics.k8s.io"},
		"spec": map[string]any{
			"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100, "versionPriority": 100,
			"insecureSkipTLSVerify": true,
			"service":               map[string]any{"namespace": "kube-system", "name": "metrics-server"},
		},
	}}
	apiservices := schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	if _, err := s.Dynamic.Resource(apiservices).Create(ctx, metrics, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating an APIService: %v", err)
	}

	served := map[string]*metav1.APIResourceList{}
	for _, gv := range []string{"apiextensions.k8s.io/v1", "apiregistration.k8s.io/v1", "example.com/v1", "example.com/v1beta1"} {
		list, err := s.Client.Discovery().ServerResourcesForGroupVersion(gv)
		if err != nil {
			t.Fatalf("reading the server's %s discovery: %v", gv, err)
		}
		served[gv] = list
	}

	// With the server stopped nothing else writes: the revision tells
	// whether building the map did.
	s.Stop()
	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{s.EtcdURL}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { etcd.Close() })
	before := revision(t, etcd)
	w := apiserver.Map(t, "--etcd-servers="+s.EtcdURL)
	if after := revision(t, etcd); after != before {
		t.Errorf("building the map moved the etcd revision from %d to %d", before, after)
	}
	routes := map[string]routetable.Route{}
	for _, r := range w.Map.Table.Routes {
		routes[r.Path] = r
	}

	t.Run("discovery equals the server's", func(t *testing.T) {
		for gv, list := range served {
			versionDiscoveryAgrees(t, list, w, gv)
		}
	})
	t.Run("paths are named as kubectl names resources", func(t *testing.T) {
		for _, p := range []string{
			"customresourcedefinitions.apiextensions.k8s.io", "customresourcedefinitions.apiextensions.k8s.io/status",
			"apiservices.apiregistration.k8s.io", "apiservices.apiregistration.k8s.io/status",
			"widgets.example.com", "widgets.example.com/status", "widgets.example.com/scale",
			"widgets.v1beta1.example.com", "widgets.v1beta1.example.com/status", "widgets.v1beta1.example.com/scale",
		} {
			if _, ok := routes[p]; !ok {
				t.Errorf("no route %s", p)
			}
			if _, ok := w.Map.Handles[p]; !ok {
				t.Errorf("no handle %s", p)
			}
		}
	})
	t.Run("storage decisions are the servers'", func(t *testing.T) {
		for path, want := range map[string]routetable.Route{
			"customresourcedefinitions.apiextensions.k8s.io": {KeyPrefix: "/registry/apiextensions.k8s.io/customresourcedefinitions/", StorageVersion: "apiextensions.k8s.io/v1beta1", MediaType: "application/json", Decorator: "cacher", Store: "own"},
			"apiservices.apiregistration.k8s.io":             {KeyPrefix: "/registry/apiregistration.k8s.io/apiservices/", StorageVersion: "apiregistration.k8s.io/v1", MediaType: "application/json", Decorator: "cacher", Store: "own"},
			"widgets.example.com":                            {KeyPrefix: "/registry/example.com/widgets/", StorageVersion: "example.com/v1", MediaType: "application/json", Decorator: "cacher", Store: "own"},
			"widgets.v1beta1.example.com":                    {KeyPrefix: "/registry/example.com/widgets/", StorageVersion: "example.com/v1", MediaType: "application/json", Decorator: "cacher", Store: "own"},
			"widgets.example.com/status":                     {KeyPrefix: "/registry/example.com/widgets/", StorageVersion: "example.com/v1", MediaType: "application/json", Decorator: "cacher", Store: "shared"},
			"widgets.example.com/scale":                      {KeyPrefix: "/registry/example.com/widgets/", StorageVersion: "example.com/v1", MediaType: "application/json", Decorator: "cacher", Store: "shared"},
		} {
			got := routes[path]
			got = routetable.Route{KeyPrefix: got.KeyPrefix, StorageVersion: got.StorageVersion, MediaType: got.MediaType, Decorator: got.Decorator, Store: got.Store}
			if js(got) != js(want) {
				t.Errorf("%s: %+v, want %+v", path, got, want)
			}
		}
		got := routes["v1beta1.metrics.k8s.io"]
		if got.ProxiedTo != "kube-system/metrics-server:443" || got.KeyPrefix != "" || got.Store != routetable.StoreNone || got.Group != "metrics.k8s.io" {
			t.Errorf("the APIService backed by a service: %+v", got)
		}
		if _, ok := routes["v1.apps"]; ok {
			t.Error("a local APIService (v1.apps) is a route of its own")
		}
	})
	t.Run("keys are where the server put the objects", func(t *testing.T) {
		for _, k := range []struct{ path, ns, name string }{
			{"widgets.example.com", "shop", "alpha"},
			{"widgets.example.com", "shop", "beta"},
			{"widgets.v1beta1.example.com", "shop", "alpha"},
			{"customresourcedefinitions.apiextensions.k8s.io", "", crd.Name},
			{"apiservices.apiregistration.k8s.io", "", "v1.apps"},
			{"apiservices.apiregistration.k8s.io", "", "v1beta1.metrics.k8s.io"},
		} {
			key, err := w.Map.Handles[k.path].Key(k.ns, k.name)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := etcd.Get(ctx, key, clientv3.WithCountOnly())
			if err != nil {
				t.Fatal(err)
			}
			if resp.Count != 1 {
				t.Errorf("%s %s/%s: no value at %s", k.path, k.ns, k.name, key)
			}
		}
	})
	t.Run("names resolve as kubectl resolves them", func(t *testing.T) {
		for name, want := range map[string]string{
			"widgets": "widgets.example.com", "widget": "widgets.example.com", "wd": "widgets.example.com",
			"Widget": "widgets.example.com", "widgets.example.com": "widgets.example.com",
			"widgets.v1beta1.example.com": "widgets.v1beta1.example.com",
			"crd":                         "customresourcedefinitions.apiextensions.k8s.io",
			"apiservices":                 "apiservices.apiregistration.k8s.io",
		} {
			h, err := w.Map.Resolve(name)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if h.Path != want {
				t.Errorf("%s resolves to %s, want %s", name, h.Path, want)
			}
		}
		hs, err := w.Map.ResolveList("gadgets")
		if err != nil || len(hs) != 1 || hs[0].Path != "widgets.example.com" {
			t.Errorf("the category gadgets: %v, %v", hs, err)
		}
	})
}

// versionDiscoveryAgrees compares the server's discovery of gv with the routes and
// handles of regctl's map for it, entry by entry.
func versionDiscoveryAgrees(t *testing.T, list *metav1.APIResourceList, w *storagemap.Session, gv string) {
	t.Helper()
	group, version, _ := strings.Cut(gv, "/")
	mine := map[string]*handle.Handle{}
	for _, h := range w.Map.Handles {
		if h.Route.Group == group && h.Route.Version == version {
			name := h.Route.Resource
			if h.Route.Subresource != "" {
				name += "/" + h.Route.Subresource
			}
			mine[name] = h
		}
	}
	if len(mine) != len(list.APIResources) {
		t.Errorf("%s: the server serves %d paths, regctl has %d", gv, len(list.APIResources), len(mine))
	}
	for _, want := range list.APIResources {
		h, ok := mine[want.Name]
		if !ok {
			t.Errorf("%s %s: served by kube-apiserver, missing from regctl", gv, want.Name)
			continue
		}
		wantGroup, wantVersion := want.Group, want.Version
		if wantGroup == "" && wantVersion == "" {
			wantGroup, wantVersion = group, version
		}
		got := h.Resource
		checks := []struct{ field, got, want string }{
			{"scope", h.Route.Scope, scopeOf(want)},
			{"kind", h.Route.Kind, want.Kind},
			{"kind group/version", got.Group + "/" + got.Version, wantGroup + "/" + wantVersion},
			{"singularName", got.SingularName, want.SingularName},
			{"verbs", js(h.Route.Verbs), js([]string(want.Verbs))},
			{"shortNames", js(h.Route.ShortNames), js(want.ShortNames)},
			{"categories", js(h.Route.Categories), js(want.Categories)},
			{"storageVersionHash", h.Route.StorageVersionHash, want.StorageVersionHash},
		}
		for _, c := range checks {
			if c.got != c.want {
				t.Errorf("%s %s: %s = %s, kube-apiserver says %s", gv, want.Name, c.field, c.got, c.want)
			}
		}
	}
}

func revision(t *testing.T, c *clientv3.Client) int64 {
	t.Helper()
	resp, err := c.Get(context.Background(), "/", clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}
