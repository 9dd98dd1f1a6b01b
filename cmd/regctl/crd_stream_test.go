package main

import (
	"context"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/restmapper"

	"github.com/regctl/regctl/internal/manifest"
	"github.com/regctl/regctl/internal/stores"
	"github.com/regctl/regctl/test/apiserver"
)

// widgetsStream is what an install manifest ships: a namespace, the widgets
// CRD, and widgets in both its served versions.
var widgetsStream = shopNamespace + "---\n" + apiserver.WidgetsCRD + "---\n" +
	"apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: alpha, namespace: shop}\nspec: {size: large}\n---\n" +
	"apiVersion: example.com/v1beta1\nkind: Widget\nmetadata: {name: beta, namespace: shop}\nspec: {replicas: 3, color: red}\n"

// TestSandboxCreatesACRDAndItsCustomResourcesInOneStream: in a sandbox
// regctl establishes the CRDs it creates, so a manifest holding a CRD and
// objects of its kind is created in one command, and each object is stored
// as a kube-apiserver stores it when the same manifest is created through
// it, in order. A CRD of a protected group (Gateway API's) carries the API
// approval condition the server's controller writes, first.
func TestSandboxCreatesACRDAndItsCustomResourcesInOneStream(t *testing.T) {
	t.Parallel()
	s := apiserver.Start(t)
	issuer, err := os.ReadFile(filepath.Join("testdata", "issuer.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	gateways := "apiVersion: v1\nkind: Namespace\nmetadata: {name: edge}\n---\n" + gatewayAPI(t, "gatewayclasses") + "---\n" + gatewayAPI(t, "gateways") + "---\n" +
		"apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: example}\nspec: {controllerName: example.com/gateway-controller}\n---\n" +
		"apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: web, namespace: edge}\nspec: {gatewayClassName: example, listeners: [{name: http, protocol: HTTP, port: 80}]}\n"
	for _, tc := range []struct {
		name, manifest string
		want           []string
	}{
		{"widgets in two versions", widgetsStream, []string{
			"customresourcedefinition.apiextensions.k8s.io/widgets.example.com created",
			"customresourcedefinition.apiextensions.k8s.io/widgets.example.com established",
			"widget.example.com/alpha created", "widget.example.com/beta created",
		}},
		{"a cert-manager-like issuer", string(issuer), []string{
			"customresourcedefinition.apiextensions.k8s.io/issuers.cert-manager.io established",
			"issuer.cert-manager.io/selfsigned created",
		}},
		{"Gateway API's gateways", gateways, []string{
			"customresourcedefinition.apiextensions.k8s.io/gatewayclasses.gateway.networking.k8s.io established",
			"customresourcedefinition.apiextensions.k8s.io/gateways.gateway.networking.k8s.io established",
			"gatewayclass.gateway.networking.k8s.io/example created",
			"gateway.gateway.networking.k8s.io/web created",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "sandbox")
			stdout, stderr, code := run(t, "--data-dir", dir, "create", "-f", manifestFile(t, tc.manifest))
			if code != 0 {
				t.Fatalf("create: exit %d: %s", code, stderr)
			}
			for _, want := range tc.want {
				if !strings.Contains(stdout+stderr, want) {
					t.Errorf("stdout %q, stderr %q: want %q", stdout, stderr, want)
				}
			}
			objs, errs := manifest.Read(strings.NewReader(tc.manifest))
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			for _, o := range objs {
				arg, serverPath := createThroughServer(t, s, o)
				args := []string{"--data-dir", dir, "get", arg, "-o", "json", "--show-managed-fields"}
				if o.Namespace != "" {
					args = append(args, "-n", o.Namespace)
				}
				stdout, stderr, code := run(t, args...)
				if code != 0 {
					t.Errorf("get %s: exit %d: %s", arg, code, stderr)
					continue
				}
				got, want := stableJSON(t, []byte(stdout)), stableJSON(t, serverGET(t, s, serverPath))
				if o.GVK.Kind == "CustomResourceDefinition" {
					// Its status is written by the apiextensions controllers,
					// whose managed fields name the client that ran them.
					got, want = withoutManagedFields(t, got), withoutManagedFields(t, want)
					// The server's controllers race: the API approval
					// condition comes first or last. regctl's come in one
					// order, approval first.
					var order []string
					got, order = conditionsByType(t, got)
					want, _ = conditionsByType(t, want)
					if strings.Contains(o.Name, ".k8s.io") && !slices.Equal(order, []string{"KubernetesAPIApprovalPolicyConformant", "NamesAccepted", "Established"}) {
						t.Errorf("%s: conditions in the order %v, want the API approval first", arg, order)
					}
				}
				if got != want {
					t.Errorf("%s: regctl stored\n%s\nthe apiserver stored\n%s", arg, got, want)
				}
			}
		})
	}
}

// createThroughServer creates o through the apiserver, as regctl's field
// manager would, and returns how
// regctl's get names it, in its own version, and the server's path for it.
func createThroughServer(t *testing.T, s *apiserver.Server, o manifest.Object) (arg, serverPath string) {
	t.Helper()
	if o.GVK == apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition") {
		apiserver.CreateCRD(t, s, string(o.JSON))
	}
	groups, err := restmapper.GetAPIGroupResources(s.Client.Discovery())
	if err != nil {
		t.Fatal(err)
	}
	m, err := restmapper.NewDiscoveryRESTMapper(groups).RESTMapping(o.GVK.GroupKind(), o.GVK.Version)
	if err != nil {
		t.Fatal(err)
	}
	if o.GVK.Kind != "CustomResourceDefinition" {
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal(o.JSON, &u.Object); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Dynamic.Resource(m.Resource).Namespace(o.Namespace).Create(context.Background(), u, metav1.CreateOptions{FieldManager: stores.DefaultFieldManager}); err != nil {
			t.Fatalf("creating %s %s through the apiserver: %v", o.GVK.Kind, o.Name, err)
		}
	}
	serverPath, arg = "/api/"+m.Resource.Version, m.Resource.Resource+"/"+o.Name
	if m.Resource.Group != "" {
		serverPath = path.Join("/apis", m.Resource.Group, m.Resource.Version)
		arg = m.Resource.Resource + "." + m.Resource.Version + "." + m.Resource.Group + "/" + o.Name
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		serverPath = path.Join(serverPath, "namespaces", o.Namespace)
	}
	return arg, path.Join(serverPath, m.Resource.Resource, o.Name)
}

// stableJSON is an object's JSON without what differs between two creates
// of it: uid, creation and condition times, resource version.
func stableJSON(t *testing.T, data []byte) string {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(data, &u.Object); err != nil {
		t.Fatalf("not json: %v: %s", err, data)
	}
	u.SetUID("")
	u.SetResourceVersion("")
	u.SetCreationTimestamp(metav1.Time{})
	managed := u.GetManagedFields()
	for i := range managed {
		managed[i].Time = nil
	}
	u.SetManagedFields(managed)
	if conditions, ok, _ := unstructured.NestedSlice(u.Object, "status", "conditions"); ok {
		for _, c := range conditions {
			delete(c.(map[string]any), "lastTransitionTime")
		}
		_ = unstructured.SetNestedSlice(u.Object, conditions, "status", "conditions")
	}
	out, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// conditionsByType is an object's JSON with its status conditions sorted
// by type, and their types in the order they came in.
func conditionsByType(t *testing.T, data string) (string, []string) {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(data), &u.Object); err != nil {
		t.Fatal(err)
	}
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var order []string
	for _, c := range conditions {
		order = append(order, c.(map[string]any)["type"].(string))
	}
	slices.SortFunc(conditions, func(a, b any) int {
		return strings.Compare(a.(map[string]any)["type"].(string), b.(map[string]any)["type"].(string))
	})
	if conditions != nil {
		_ = unstructured.SetNestedSlice(u.Object, conditions, "status", "conditions")
	}
	out, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), order
}

func withoutManagedFields(t *testing.T, data string) string {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(data), &u.Object); err != nil {
		t.Fatal(err)
	}
	u.SetManagedFields(nil)
	out, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestSandboxRefusesABadCustomResourceOfACRDOfTheStream: the custom
// resources awaiting a CRD of the manifest are checked once it is
// established, all before the first is written: a bad one leaves them all
// unwritten, and says why as the schema does.
func TestSandboxRefusesABadCustomResourceOfACRDOfTheStream(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sandbox")
	stream := strings.Replace(widgetsStream, "size: large", "size: huge", 1)
	_, stderr, code := run(t, "--data-dir", dir, "create", "-f", manifestFile(t, stream))
	if code == 0 {
		t.Fatal("exit 0 with an invalid widget")
	}
	for _, want := range []string{
		"customresourcedefinition.apiextensions.k8s.io/widgets.example.com established",
		`error: document 3: Widget.example.com "alpha" is invalid: spec.size: Unsupported value: "huge"`,
		"2 of 4 objects were not created",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q: want %q", stderr, want)
		}
	}
	if out := mustRun(t, "--data-dir", dir, "get", "widgets", "-A", "-o", "name"); out != "" {
		t.Errorf("widgets written: %q", out)
	}
}

// TestCRDAndItsCustomResourcesInOneStreamRefusedOnALiveEtcd: on a live
// etcd only the apiserver's controllers establish a CRD, and in a dry run
// none is established: there a custom resource of a CRD of the same
// manifest is refused, and nothing is written.
func TestCRDAndItsCustomResourcesInOneStreamRefusedOnALiveEtcd(t *testing.T) {
	t.Parallel()
	want := []string{`document 3: apiVersion "example.com/v1" is not served (see ` + "`regctl routes -o wide`)", "nothing was written"}
	t.Run("live etcd", func(t *testing.T) {
		s := newLiveEtcd(t)
		before := s.revision(t)
		_, stderr, code := run(t, "create", "-f", manifestFile(t, widgetsStream), s.flag())
		if code == 0 {
			t.Fatal("exit 0")
		}
		for _, w := range want {
			if !strings.Contains(stderr, w) {
				t.Errorf("stderr %q: want %q", stderr, w)
			}
		}
		if after := s.revision(t); after != before {
			t.Errorf("etcd revision moved from %d to %d", before, after)
		}
	})
	t.Run("dry run in a sandbox", func(t *testing.T) {
		// An empty directory: a new sandbox that a dry run may open.
		dir := t.TempDir()
		_, stderr, code := run(t, "--data-dir", dir, "create", "-f", manifestFile(t, widgetsStream), "--dry-run")
		if code == 0 {
			t.Fatal("exit 0")
		}
		for _, w := range want {
			if !strings.Contains(stderr, w) {
				t.Errorf("stderr %q: want %q", stderr, w)
			}
		}
		if _, stderr, code := run(t, "--data-dir", dir, "get", "crd/widgets.example.com"); code == 0 || !strings.Contains(stderr, "not found") {
			t.Errorf("after a dry run: exit %d, %q: want the CRD not found", code, stderr)
		}
	})
}
