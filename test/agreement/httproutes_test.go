package agreement

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/test/apiserver"
)

// TestHTTPRoutesAgreeWithOpenAPI starts a default kube-apiserver, and one
// with every API version on, and compares, group version by group version,
// the routes `regctl routes --http` prints with the operations of the
// server's OpenAPI v3 document of that group version: the same methods on
// the same paths, each with the installer's action the server publishes as
// x-kubernetes-action.
func TestHTTPRoutesAgreeWithOpenAPI(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		flags   []string
		minDocs int
	}{
		{"default", nil, 20},
		{"every API", []string{"--runtime-config=api/all=true"}, 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			server := apiserver.Start(t, tc.flags...)
			w := apiserver.Map(t, append([]string{"--etcd-servers=" + server.EtcdURL}, tc.flags...)...)
			got, err := w.Map.HTTPRoutes()
			if err != nil {
				t.Fatal(err)
			}
			docs := httpRoutesAgree(t, server.Client, got)
			t.Logf("compared %d routes with the operations of %d OpenAPI documents", len(got.Routes), len(docs))
			if len(docs) < tc.minDocs {
				t.Errorf("compared %d group versions (%v), want every built-in one", len(docs), docs)
			}
			if n := len(openAPIOperations(t, server.Client, "api/v1")); n < 240 {
				t.Errorf("api/v1 has %d operations, want about 250", n)
			}
		})
	}
}

// TestHTTPRoutesFollowRuntimeConfig turns off a resource and a whole group
// version: their routes are gone from regctl's routes and from the
// server's OpenAPI alike.
func TestHTTPRoutesFollowRuntimeConfig(t *testing.T) {
	t.Parallel()
	flags := []string{"--runtime-config=batch/v1/cronjobs=false,autoscaling/v2=false"}
	w := apiserver.Map(t, flags...)
	w.Close()
	got, err := w.Map.HTTPRoutes()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got.Routes {
		if strings.HasPrefix(r.Resource, "cronjobs") || r.APIVersion() == "autoscaling/v2" {
			t.Errorf("route %s %s of %s %s is served with %s", r.Method, r.Path, r.APIVersion(), r.Resource, flags[0])
		}
	}
	if len(got.Filter(routetable.HTTPFilter{Groups: []string{"batch"}}).Routes) == 0 || len(got.Filter(routetable.HTTPFilter{Groups: []string{"autoscaling"}}).Routes) == 0 {
		t.Error("batch/v1 jobs or autoscaling/v1 are gone too")
	}
	server := apiserver.Start(t, flags...)
	docs := httpRoutesAgree(t, server.Client, got)
	if slices.Contains(docs, "apis/autoscaling/v2") {
		t.Error("the server still serves autoscaling/v2")
	}
}

// httpRoutesAgree compares routes with the OpenAPI v3 document of every
// group version the server serves, and returns the documents compared.
func httpRoutesAgree(t *testing.T, client kubernetes.Interface, routes routetable.HTTPRouteTable) []string {
	t.Helper()
	byDoc := map[string]map[string]string{} // "METHOD path" to action
	for _, r := range routes.Routes {
		doc := "apis/" + r.Group + "/" + r.Version
		if r.Group == "" {
			doc = "api/" + r.Version
		}
		if byDoc[doc] == nil {
			byDoc[doc] = map[string]string{}
		}
		byDoc[doc][r.Method+" "+r.Path] = r.Action
	}
	var docs []string
	for _, doc := range groupVersionDocs(t, client) {
		docs = append(docs, doc)
		want := map[string]string{}
		for op, action := range openAPIOperations(t, client, doc) {
			if action == "" {
				// The version's discovery, which reaches no storage.
				if op != "GET /"+doc+"/" {
					t.Errorf("%s: operation %s has no x-kubernetes-action", doc, op)
				}
				continue
			}
			want[op] = action
		}
		got := byDoc[doc]
		delete(byDoc, doc)
		for _, op := range slices.Sorted(maps.Keys(want)) {
			if a, ok := got[op]; !ok {
				t.Errorf("%s: the server serves %s (%s), regctl has no such route", doc, op, want[op])
			} else if a != want[op] {
				t.Errorf("%s: %s is %s on the server, %s in regctl", doc, op, want[op], a)
			}
		}
		for _, op := range slices.Sorted(maps.Keys(got)) {
			if _, ok := want[op]; !ok {
				t.Errorf("%s: regctl has %s (%s), the server does not serve it", doc, op, got[op])
			}
		}
	}
	for _, doc := range slices.Sorted(maps.Keys(byDoc)) {
		t.Errorf("regctl has %d routes in %s, the server has no such OpenAPI document", len(byDoc[doc]), doc)
	}
	return docs
}

// groupVersionDocs lists the server's OpenAPI v3 documents of group
// versions: "api/v1" and "apis/<group>/<version>", not those of groups
// alone or of non-resource paths (version, logs, .well-known).
func groupVersionDocs(t *testing.T, client kubernetes.Interface) []string {
	t.Helper()
	var index struct {
		Paths map[string]json.RawMessage `json:"paths"`
	}
	getJSON(t, client, "/openapi/v3", &index)
	var out []string
	for doc := range index.Paths {
		parts := strings.Split(doc, "/")
		if (parts[0] == "api" && len(parts) == 2) || (parts[0] == "apis" && len(parts) == 3) {
			out = append(out, doc)
		}
	}
	slices.Sort(out)
	return out
}

// openAPIOperations reads the operations of one OpenAPI v3 document, as
// "METHOD path" to their x-kubernetes-action.
func openAPIOperations(t *testing.T, client kubernetes.Interface, doc string) map[string]string {
	t.Helper()
	var spec struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	getJSON(t, client, "/openapi/v3/"+doc, &spec)
	out := map[string]string{}
	for p, item := range spec.Paths {
		for method, raw := range item {
			switch method {
			case "get", "put", "post", "delete", "options", "head", "patch", "trace":
			default:
				continue // parameters, summary
			}
			var op struct {
				Action string `json:"x-kubernetes-action"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatalf("reading %s %s of %s: %v", method, p, doc, err)
			}
			out[strings.ToUpper(method)+" "+p] = op.Action
		}
	}
	return out
}

func getJSON(t *testing.T, client kubernetes.Interface, path string, into any) {
	t.Helper()
	body, err := client.Discovery().RESTClient().Get().AbsPath(path).DoRaw(context.Background())
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	if err := json.Unmarshal(body, into); err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
}
