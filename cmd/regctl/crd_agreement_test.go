package main

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/test/apiserver"
	"go.uber.org/zap"
)

var widgetsV1 = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

func widget(version, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/" + version, "kind": "Widget",
		"metadata": map[string]any{"name": name, "namespace": "shop"},
		"spec":     spec,
	}}
}

func manifestOf(t *testing.T, u *unstructured.Unstructured) string {
	t.Helper()
	data, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, u.GetName()+".json", string(data))
}

// TestCustomResourcesAgreeWithKubeAPIServer creates a CRD and custom
// resources through a real kube-apiserver, and reads and writes them with
// regctl's commands on the same etcd: what regctl prints is what the server
// serves and what kubectl prints; what regctl writes the server serves,
// defaulted by the CRD's schema; what the schema refuses regctl refuses
// with the server's field errors. With the server stopped, reads leave the
// etcd revision where it was.
func TestCustomResourcesAgreeWithKubeAPIServer(t *testing.T) {
	t.Parallel()
	s := apiserver.Start(t)
	apiserver.CreateWidgetsCRD(t, s)
	k := newKubectl(t, s)
	etcdFlag := "--etcd-servers=" + s.EtcdURL
	ctx := context.Background()
	createNamespace(t, s, "shop")
	for _, u := range []*unstructured.Unstructured{
		widget("v1", "alpha", map[string]any{"size": "large"}),
		widget("v1beta1", "beta", map[string]any{"replicas": int64(3), "color": "red"}),
	} {
		gvr := widgetsV1
		gvr.Version = u.GroupVersionKind().Version
		if _, err := s.Dynamic.Resource(gvr).Namespace("shop").Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating widget %s: %v", u.GetName(), err)
		}
		time.Sleep(1100 * time.Millisecond) // ages differ in tables
	}

	t.Run("get -o json equals the apiserver's GET", func(t *testing.T) {
		for _, c := range []struct{ args, path string }{
			{"widgets/alpha -n shop", "/apis/example.com/v1/namespaces/shop/widgets/alpha"},
			{"wd/beta -n shop", "/apis/example.com/v1/namespaces/shop/widgets/beta"},
			{"widgets.v1beta1.example.com/alpha -n shop", "/apis/example.com/v1beta1/namespaces/shop/widgets/alpha"},
			{"widgets/alpha -n shop --subresource status", "/apis/example.com/v1/namespaces/shop/widgets/alpha/status"},
			{"widgets/beta -n shop --subresource scale", "/apis/example.com/v1/namespaces/shop/widgets/beta/scale"},
			{"crd/widgets.example.com", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com"},
			{"apiservices/v1.apps", "/apis/apiregistration.k8s.io/v1/apiservices/v1.apps"},
			{"apiservices/v1.example.com", "/apis/apiregistration.k8s.io/v1/apiservices/v1.example.com"},
		} {
			stdout, stderr, code := run(t, append(append([]string{"get"}, strings.Fields(c.args)...), "-o", "json", "--show-managed-fields", etcdFlag)...)
			if code != 0 {
				t.Errorf("get %s: exit %d: %s", c.args, code, stderr)
				continue
			}
			if got, want := normalize(t, []byte(stdout)), normalize(t, serverGET(t, s, c.path)); got != want {
				t.Errorf("get %s: regctl and the apiserver differ\nregctl:    %s\napiserver: %s", c.args, got, want)
			}
		}
	})
	t.Run("tables are kubectl's", func(t *testing.T) {
		for _, args := range [][]string{
			{"widgets", "-n", "shop"},
			{"wd", "-A"},
			{"widgets.v1beta1.example.com", "-n", "shop", "-o", "wide"},
			{"gadgets", "-n", "shop"},
			{"widgets", "-n", "shop", "-o", "yaml"},
			{"widgets", "-A", "--field-selector", "metadata.name=beta"},
			{"widgets", "-n", "shop", "-o", "custom-columns=NAME:.metadata.name,COLOR:.spec.color", "--sort-by=.spec.replicas"},
			{"crd"},
			{"apiservices", "v1.apps", "v1.example.com"},
		} {
			t.Run(caseName(args), func(t *testing.T) { agreeWithKubectl(t, k, s.EtcdURL, args...) })
		}
	})
	t.Run("create -f and replace -f write what the server serves, defaulted", func(t *testing.T) {
		stdout, stderr, code := run(t, "create", "-f", manifestOf(t, widget("v1beta1", "gamma", map[string]any{"color": "blue"})), "-o", "json", etcdFlag)
		if code != 0 {
			t.Fatalf("create: exit %d: %s", code, stderr)
		}
		printed := normalize(t, []byte(stdout))
		if served := normalize(t, serverGET(t, s, "/apis/example.com/v1beta1/namespaces/shop/widgets/gamma")); printed != served {
			t.Errorf("regctl printed\n%s\nthe apiserver serves\n%s", printed, served)
		}
		if !strings.Contains(printed, `"spec":{"color":"blue","replicas":1,"size":"small"}`) {
			t.Errorf("the schema's defaults are not applied: %s", printed)
		}
		_, stderr, code = run(t, "replace", "-f", manifestOf(t, widget("v1", "gamma", map[string]any{"size": "large", "unknown": "pruned?"})), "--force", etcdFlag)
		if code == 0 || !strings.Contains(stderr, `unknown field "spec.unknown"`) {
			t.Errorf("replace with an unknown field: exit %d, want the server's strict refusal: %s", code, stderr)
		}
		stdout, stderr, code = run(t, "replace", "-f", manifestOf(t, widget("v1", "gamma", map[string]any{"size": "large"})), "--force", "-o", "json", etcdFlag)
		if code != 0 {
			t.Fatalf("replace: exit %d: %s", code, stderr)
		}
		if printed, served := normalize(t, []byte(stdout)), normalize(t, serverGET(t, s, "/apis/example.com/v1/namespaces/shop/widgets/gamma")); printed != served {
			t.Errorf("regctl printed\n%s\nthe apiserver serves\n%s", printed, served)
		}
		if _, stderr, code := run(t, "delete", "widgets/gamma", "-n", "shop", etcdFlag); code != 0 {
			t.Fatalf("delete: exit %d: %s", code, stderr)
		}
		if _, err := s.Dynamic.Resource(widgetsV1).Namespace("shop").Get(ctx, "gamma", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the apiserver still serves a deleted widget: %v", err)
		}
	})
	t.Run("--validate=warn prunes unknown fields as the server does", func(t *testing.T) {
		spec := map[string]any{"size": "small", "shape": "round"}
		stdout, stderr, code := run(t, "create", "-f", manifestOf(t, widget("v1", "delta", spec)), "--validate=warn", "-o", "json", etcdFlag)
		if code != 0 {
			t.Fatalf("create: exit %d: %s", code, stderr)
		}
		if !strings.Contains(stderr, `Warning: unknown field "spec.shape"`) {
			t.Errorf("no warning for the unknown field:\n%s", stderr)
		}
		served, err := s.Dynamic.Resource(widgetsV1).Namespace("shop").Create(ctx, widget("v1", "delta-server", spec), metav1.CreateOptions{FieldValidation: metav1.FieldValidationWarn})
		if err != nil {
			t.Fatal(err)
		}
		var printed unstructured.Unstructured
		if err := json.Unmarshal([]byte(stdout), &printed.Object); err != nil {
			t.Fatal(err)
		}
		if got, want := js(t, printed.Object["spec"]), js(t, served.Object["spec"]); got != want {
			t.Errorf("regctl stored spec %s, the apiserver %s", got, want)
		}
		for _, name := range []string{"delta", "delta-server"} {
			if err := s.Dynamic.Resource(widgetsV1).Namespace("shop").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("get -w follows custom resources through the store's watch", func(t *testing.T) {
		r := startWatch(t, "get", "widgets.v1beta1.example.com", "-n", "shop", "-w", "-o", "json", "--output-watch-events", etcdFlag)
		r.waitFor(t, "the listed widgets", func(out string) bool { return strings.Contains(out, `"name":"beta"`) })
		created, err := s.Dynamic.Resource(widgetsV1).Namespace("shop").Create(ctx, widget("v1", "epsilon", map[string]any{"size": "large"}), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Dynamic.Resource(widgetsV1).Namespace("shop").Delete(ctx, "epsilon", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		r.waitFor(t, "the deletion of epsilon", func(out string) bool { return strings.Contains(out, `"type":"DELETED"`) })
		r.interrupt(t)
		want := []string{"ADDED@" + created.GetResourceVersion()}
		got := eventsOf(jsonEvents(t, r.out.String()), "epsilon")
		if len(got) != 2 || got[0] != want[0] || !strings.HasPrefix(got[1], "DELETED@") {
			t.Errorf("regctl printed %v for epsilon, want %v and its deletion", got, want)
		}
		// Served in the version watched, as the server's watch serves it.
		if !strings.Contains(r.out.String(), `"apiVersion":"example.com/v1beta1"`) || strings.Contains(r.out.String(), `"apiVersion":"example.com/v1"`) {
			t.Errorf("events not in example.com/v1beta1:\n%s", r.out.String())
		}
	})
	bad := widget("v1", "bad", map[string]any{"size": "huge", "replicas": int64(-1)})
	_, serverErr := s.Dynamic.Resource(widgetsV1).Namespace("shop").Create(ctx, bad, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if !apierrors.IsInvalid(serverErr) {
		t.Fatalf("the apiserver takes an invalid widget: %v", serverErr)
	}

	// From here on the apiserver is stopped: nothing else writes to etcd.
	s.Stop()
	etcd := etcdClient(t, s.EtcdURL)
	before := revisionOf(t, etcd)

	t.Run("a schema violation is refused with the server's field errors", func(t *testing.T) {
		_, stderr, code := run(t, "create", "-f", manifestOf(t, bad), etcdFlag)
		if code == 0 {
			t.Fatal("regctl created an invalid widget")
		}
		// The schema validator's errors come in no fixed order: compare
		// them one by one.
		causes := serverErr.(apierrors.APIStatus).Status().Details.Causes
		if len(causes) == 0 {
			t.Fatalf("the apiserver's error has no causes: %v", serverErr)
		}
		for _, c := range causes {
			if want := c.Field + ": " + c.Message; !strings.Contains(stderr, want) {
				t.Errorf("stderr does not say %q, as the apiserver does:\n%s", want, stderr)
			}
		}
		if !strings.Contains(stderr, `Widget.example.com "bad" is invalid`) {
			t.Errorf("stderr does not name the widget as the apiserver does:\n%s", stderr)
		}
		// The server's errors, in the order of their fields, every time.
		byField := slices.Clone(causes)
		slices.SortStableFunc(byField, func(a, b metav1.StatusCause) int {
			return cmp.Or(cmp.Compare(a.Field, b.Field), cmp.Compare(a.Message, b.Message))
		})
		var sorted []string
		for _, c := range byField {
			sorted = append(sorted, c.Field+": "+c.Message)
		}
		want := `Widget.example.com "bad" is invalid: ` + sorted[0]
		if len(sorted) > 1 {
			want = `Widget.example.com "bad" is invalid: [` + strings.Join(sorted, ", ") + "]"
		}
		for range 10 {
			_, again, _ := run(t, "create", "-f", manifestOf(t, bad), "--dry-run", etcdFlag)
			if !strings.Contains(again, want) {
				t.Fatalf("stderr %q: want the field errors in field order, %q", again, want)
			}
		}
	})
	t.Run("keys and inspect show where the server stored them", func(t *testing.T) {
		stdout, stderr, code := run(t, "keys", "widgets", "-n", "shop", etcdFlag)
		if code != 0 {
			t.Fatalf("keys: exit %d: %s", code, stderr)
		}
		if want := "/registry/example.com/widgets/shop/alpha\n/registry/example.com/widgets/shop/beta\n"; stdout != want {
			t.Errorf("keys widgets -n shop:\n%s\nwant\n%s", stdout, want)
		}
		// beta was created in v1beta1 and is stored in v1, the storage
		// version; the CRD in apiextensions v1beta1.
		for args, want := range map[string]string{
			"wd/beta -n shop":         "example.com/v1",
			"crd/widgets.example.com": "apiextensions.k8s.io/v1beta1",
			"apiservices/v1.apps":     "apiregistration.k8s.io/v1",
		} {
			stdout, stderr, code := run(t, append(append([]string{"inspect"}, strings.Fields(args)...), "-o", "json", etcdFlag)...)
			if code != 0 {
				t.Fatalf("inspect %s: exit %d: %s", args, code, stderr)
			}
			var info etcdview.ValueInfo
			if err := json.Unmarshal([]byte(stdout), &info); err != nil {
				t.Fatal(err)
			}
			if info.StoredAPIVersion != want || info.Encoding != "application/json" || info.Problem != "" {
				t.Errorf("inspect %s: %+v, want stored as json in %s", args, info, want)
			}
		}
	})
	t.Run("reads, and the refused create, write nothing", func(t *testing.T) {
		for _, args := range []string{"get widgets -n shop", "get wd -A -o yaml", "get gadgets -A", "get crd", "get apiservices -o json", "keys", "routes"} {
			if _, stderr, code := run(t, append(strings.Fields(args), etcdFlag)...); code != 0 {
				t.Errorf("%s: exit %d: %s", args, code, stderr)
			}
		}
		if after := revisionOf(t, etcd); after != before {
			t.Errorf("the etcd revision moved from %d to %d", before, after)
		}
	})
}

func js(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// serverGET is the apiserver's JSON for path.
func serverGET(t *testing.T, s *apiserver.Server, path string) []byte {
	t.Helper()
	raw, err := s.Client.CoreV1().RESTClient().Get().AbsPath(path).SetHeader("Accept", "application/json").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return raw
}

func etcdClient(t *testing.T, url string) *clientv3.Client {
	t.Helper()
	// Quiet: the client's default logger writes JSON to stderr.
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func revisionOf(t *testing.T, c *clientv3.Client) int64 {
	t.Helper()
	rev, err := etcdview.Revision(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return rev
}
