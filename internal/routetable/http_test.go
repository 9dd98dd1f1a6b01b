package routetable

import (
	"reflect"
	"strings"
	"testing"
)

func httpSample() HTTPRouteTable {
	pod := HTTPRoute{Group: "", Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true, Storage: "*storage.REST"}
	route := func(method, path, action, resource string) HTTPRoute {
		r := pod
		r.Method, r.Path, r.Action = method, path, action
		if resource != "" {
			r.Resource = resource
		}
		return r
	}
	deploy := HTTPRoute{Method: "GET", Path: "/apis/apps/v1/watch/deployments", Action: "watchlist", Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true, Storage: "*storage.REST"}
	return HTTPRouteTable{
		Kind:              HTTPKind,
		FormatVersion:     HTTPFormatVersion,
		KubernetesVersion: "v1.36.3",
		Routes: []HTTPRoute{
			route("GET", "/api/v1/namespaces/{namespace}/pods/{name}", "get", ""),
			route("PUT", "/api/v1/namespaces/{namespace}/pods/{name}", "put", ""),
			route("GET", "/api/v1/namespaces/{namespace}/pods/{name}/status", "get", "pods/status"),
			route("GET", "/api/v1/watch/pods", "watchlist", ""),
			deploy,
		},
	}
}

func TestLoadDocumentTellsTheKinds(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		d, err := LoadDocument(strings.NewReader(marshal(t, httpSample(), asJSON)), "http.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if d.Storage != nil || d.HTTP == nil || !reflect.DeepEqual(*d.HTTP, httpSample()) {
			t.Errorf("json=%v: loaded %+v, want the HTTP table back", asJSON, d)
		}
		d, err = LoadDocument(strings.NewReader(marshal(t, sample(), asJSON)), "table.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if d.HTTP != nil || d.Storage == nil || !reflect.DeepEqual(*d.Storage, sample()) {
			t.Errorf("json=%v: loaded %+v, want the route table back", asJSON, d)
		}
	}
}

func TestLoadHTTPErrors(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"a route table", marshal(t, sample(), false), "reading t.yaml: not an HTTP route table: its kind is not HTTPRouteTable"},
		{"newer", "kind: HTTPRouteTable\nformatVersion: 2\nroutes: []\n", "this regctl reads up to 1"},
		{"no method", "kind: HTTPRouteTable\nformatVersion: 1\nroutes:\n- path: /api/v1/pods\n", "reading t.yaml: route /api/v1/pods has no method"},
		{"no path", "kind: HTTPRouteTable\nformatVersion: 1\nroutes:\n- method: GET\n", "reading t.yaml: a route has no path"},
		{"twice", "kind: HTTPRouteTable\nformatVersion: 1\nroutes:\n- {method: GET, path: /api/v1/pods}\n- {method: GET, path: /api/v1/pods}\n", `reading t.yaml: route "GET /api/v1/pods" is listed twice`},
		{"unknown field", "kind: HTTPRouteTable\nformatVersion: 1\nroutes:\n- {method: GET, path: /api/v1/pods, scope: Cluster}\n", `unknown field "routes[0].scope"`},
	} {
		if _, err := LoadHTTP(strings.NewReader(tc.doc), "t.yaml"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := Load(strings.NewReader(marshal(t, httpSample(), false)), "t.yaml"); err == nil || !strings.Contains(err.Error(), "it is an HTTP route table") {
		t.Errorf("Load of an HTTP table: error %v", err)
	}
}

func TestCompareHTTP(t *testing.T) {
	old, new := httpSample(), httpSample()
	removed := new.Routes[1]
	new.Routes = append(new.Routes[:1], new.Routes[2:]...)
	added := removed
	added.Method, added.Action = "PATCH", "patch"
	new.Routes = append(new.Routes, added)
	new.Routes[0].Storage = "*storage.Other"
	new.KubernetesVersion = "v1.37.0"

	ignore, err := NewHTTPFilter(nil, []string{"kubernetesVersion"})
	if err != nil {
		t.Fatal(err)
	}
	res := CompareHTTP(old, new, ignore)
	res.Old, res.New = "old.yaml", "live"
	if res.Equal {
		t.Fatal("a route added, one removed and one changed, but equal")
	}
	var b strings.Builder
	if err := res.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `--- old.yaml
+++ live
kubernetesVersion: v1.36.3 -> v1.37.0 (informational)
changed: GET /api/v1/namespaces/{namespace}/pods/{name}
  storage: *storage.REST -> *storage.Other
added: PATCH /api/v1/namespaces/{namespace}/pods/{name}
removed: PUT /api/v1/namespaces/{namespace}/pods/{name}
`
	if b.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", b.String(), want)
	}
	if res := CompareHTTP(old, old, Filter{}); !res.Equal || !res.Empty() {
		t.Errorf("a table compared with itself: %+v", res)
	}
}

func TestHTTPFields(t *testing.T) {
	want := "kubernetesVersion,emulatedVersion,featureGates,action,group,version,resource,kind,kindGroupVersion,namespaced,storage"
	if got := strings.Join(HTTPFields(), ","); got != want {
		t.Errorf("HTTPFields() = %s, want %s", got, want)
	}
	if _, err := NewHTTPFilter([]string{"keyPrefix"}, nil); err == nil || !strings.Contains(err.Error(), "valid fields are "+want) {
		t.Errorf("a route table field in an HTTP filter: %v", err)
	}
}

func TestHTTPFilter(t *testing.T) {
	tab := httpSample()
	paths := func(t HTTPRouteTable) []string {
		var out []string
		for _, r := range t.Routes {
			out = append(out, r.key())
		}
		return out
	}
	for _, tc := range []struct {
		name string
		f    HTTPFilter
		want []string
	}{
		{"none", HTTPFilter{}, paths(tab)},
		{"core", HTTPFilter{Groups: []string{"core"}}, paths(tab)[:4]},
		{"apps", HTTPFilter{Groups: []string{"apps"}}, paths(tab)[4:]},
		{"a resource and its subresources", HTTPFilter{Resources: []string{"pods"}}, paths(tab)[:4]},
		{"a subresource", HTTPFilter{Resources: []string{"pods/status"}}, paths(tab)[2:3]},
		{"watchlist", HTTPFilter{Actions: []string{"watchlist"}}, []string{"GET /api/v1/watch/pods", "GET /apis/apps/v1/watch/deployments"}},
		{"all three", HTTPFilter{Groups: []string{""}, Resources: []string{"pods"}, Actions: []string{"get", "put"}}, paths(tab)[:3]},
	} {
		if got := paths(tab.Filter(tc.f)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := strings.Join(tab.Resources(), ","); got != "deployments,pods,pods/status" {
		t.Errorf("Resources() = %s", got)
	}
	if got := strings.Join(tab.Actions(), ","); got != "get,put,watchlist" {
		t.Errorf("Actions() = %s", got)
	}
	if got := strings.Join(tab.Groups(), ","); got != "core,apps" {
		t.Errorf("Groups() = %s", got)
	}
}

func TestHTTPRows(t *testing.T) {
	tab := httpSample()
	if h, r := tab.Header(true), tab.Rows(true); len(h) != len(r[0]) || r[4][4] != "apps/v1" || r[0][6] != "true" {
		t.Errorf("wide header %v, first rows %v", h, r)
	}
}
