package storagemap

import (
	"strings"
	"testing"
)

func TestStoragePathOf(t *testing.T) {
	for rel, want := range map[string]string{
		"pods":                                              "pods",
		"namespaces/{namespace}/pods":                       "pods",
		"namespaces/{namespace}/pods/{name}":                "pods",
		"namespaces/{namespace}/pods/{name}/proxy":          "pods/proxy",
		"namespaces/{namespace}/pods/{name}/proxy/{path:*}": "pods/proxy",
		"watch/namespaces/{namespace}/pods/{name}":          "pods",
		"watch/pods":                                        "pods",
		"namespaces":                                        "namespaces",
		"namespaces/{name}":                                 "namespaces",
		"namespaces/{name}/finalize":                        "namespaces/finalize",
		"watch/namespaces/{name}":                           "namespaces",
		"nodes/{name}/proxy/{path:*}":                       "nodes/proxy",
		"selfsubjectaccessreviews":                          "selfsubjectaccessreviews",
		"deployments/{name}/scale":                          "deployments/scale",
	} {
		got, err := storagePathOf(rel)
		if err != nil || got != want {
			t.Errorf("storagePathOf(%q) = %q, %v; want %q", rel, got, err, want)
		}
	}
	for _, rel := range []string{"", "{name}", "watch/{name}"} {
		if got, err := storagePathOf(rel); err == nil {
			t.Errorf("storagePathOf(%q) = %q, want an error", rel, got)
		}
	}
	if got := openAPITemplate("/api/v1/nodes/{name}/proxy/{path:*}"); got != "/api/v1/nodes/{name}/proxy/{path}" {
		t.Errorf("openAPITemplate: %s", got)
	}
}

// TestHTTPRoutesReachEveryPath holds the HTTP routes to the route table:
// every path of the map has routes, each reaching that path's storage, in
// its scope.
func TestHTTPRoutesReachEveryPath(t *testing.T) {
	w := build(t)
	tab, err := w.Map.HTTPRoutes()
	if err != nil {
		t.Fatal(err)
	}
	type key struct{ apiVersion, resource string }
	routed := map[key]int{}
	for _, r := range tab.Routes {
		k := key{r.APIVersion(), r.Resource}
		routed[k]++
		if !strings.HasPrefix(r.Path, "/api/"+r.APIVersion()+"/") && !strings.HasPrefix(r.Path, "/apis/"+r.APIVersion()+"/") {
			t.Errorf("%s %s is not under %s", r.Method, r.Path, r.APIVersion())
		}
	}
	for _, p := range w.Map.Table.Routes {
		resource := p.Resource
		if p.Subresource != "" {
			resource += "/" + p.Subresource
		}
		k := key{p.APIVersion(), resource}
		if routed[k] == 0 {
			t.Errorf("%s (%s %s) has no HTTP route", p.Path, k.apiVersion, k.resource)
		}
		delete(routed, k)
		for _, r := range tab.Routes {
			if r.APIVersion() == k.apiVersion && r.Resource == k.resource && (r.Storage != p.Storage || r.Namespaced != (p.Scope == "Namespaced")) {
				t.Errorf("%s %s: storage %s, namespaced %v; the route table's %s is %s, %s", r.Method, r.Path, r.Storage, r.Namespaced, p.Path, p.Storage, p.Scope)
			}
		}
	}
	for k, n := range routed {
		t.Errorf("%d HTTP routes reach %s %s, which is not in the route table", n, k.apiVersion, k.resource)
	}

	part := buildConfig(t, Config{Only: "pods"})
	if _, err := part.Map.HTTPRoutes(); err == nil || !strings.Contains(err.Error(), "built for some resources only") {
		t.Errorf("HTTP routes of a map built for pods only: %v", err)
	}
}
