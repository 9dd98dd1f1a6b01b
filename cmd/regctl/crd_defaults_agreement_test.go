package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/regctl/regctl/internal/changes"
	"github.com/regctl/regctl/internal/scan"
	"github.com/regctl/regctl/test/apiserver"
)

// gizmosCRD is a CRD as its first release shipped it: v1alpha1 stored, no
// defaults, a field (spec.extra) its next release removes.
const gizmosCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gizmos, singular: gizmo, kind: Gizmo, listKind: GizmoList}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              extra: {type: string}
              ports: {type: array, items: {type: object, properties: {port: {type: integer}}}}
              template: {type: object, properties: {size: {type: string}}}
          status: {type: object, properties: {phase: {type: string}}}
`

// gizmosCRDUpgraded is its next release: v1 stored, both versions served,
// with defaults (each version its own spec.mode; nested ones, in list
// items and in an object defaulted itself; status, without a status
// subresource) and printer columns of defaulted fields; spec.extra is
// gone, so the server prunes it where it is stored.
const gizmosCRDUpgraded = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gizmos, singular: gizmo, kind: Gizmo, listKind: GizmoList}
  versions:
  - name: v1alpha1
    served: true
    storage: false
    additionalPrinterColumns: &columns
    - {name: Mode, type: string, jsonPath: .spec.mode}
    - {name: Replicas, type: integer, jsonPath: .spec.template.replicas}
    - {name: Phase, type: string, jsonPath: .status.phase}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              mode: {type: string, default: legacy}
              ports: &ports {type: array, items: {type: object, properties: {port: {type: integer}, protocol: {type: string, default: TCP}}}}
              template: &template {type: object, default: {}, properties: {size: {type: string}, replicas: {type: integer, default: 1}}}
          status: &status {type: object, default: {phase: Pending}, properties: {phase: {type: string}}}
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns: *columns
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              mode: {type: string, default: modern}
              ports: *ports
              template: *template
          status: *status
`

// gatewayAPI is a CRD of Gateway API's standard channel, as it ships.
func gatewayAPI(t *testing.T, plural string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "bench", "testdata", "crds", "gateway-api", "gateway.networking.k8s.io_"+plural+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

var (
	gizmosV1alpha1 = schema.GroupVersionResource{Group: "example.com", Version: "v1alpha1", Resource: "gizmos"}
	gizmosV1       = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gizmos"}
	gatewaysV1     = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}
	classesV1      = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gatewayclasses"}
)

// TestListsOfCustomResourcesAgreeWithKubeAPIServer stores custom resources
// through a real kube-apiserver that its CRD's schema defaults when the
// server reads them, not before: Gateway API's gateways and gateway
// classes, whose status the server defaults (a status subresource drops
// what a create sends), and gizmos stored before their CRD gained
// defaults (on spec and status, nested, another per version, with no
// status subresource) and lost a field. Every list regctl reads of them,
// in every output, live, at a revision, from a snapshot and as a watch
// starts, is what the server lists; diff --from, restore and scan read
// them as the server does.
func TestListsOfCustomResourcesAgreeWithKubeAPIServer(t *testing.T) {
	t.Parallel()
	s := apiserver.Start(t)
	ctx := context.Background()
	etcdFlag := "--etcd-servers=" + s.EtcdURL
	etcd := etcdClient(t, s.EtcdURL)
	k := newKubectl(t, s)
	for _, plural := range []string{"gatewayclasses", "gateways"} {
		apiserver.CreateCRD(t, s, gatewayAPI(t, plural))
	}
	apiserver.CreateCRD(t, s, gizmosCRD)
	for _, ns := range []string{"shop", "team"} {
		createNamespace(t, s, ns)
	}
	create := func(gvr schema.GroupVersionResource, manifest string) {
		t.Helper()
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Dynamic.Resource(gvr).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating %s %s: %v", gvr.Resource, u.GetName(), err)
		}
	}
	create(gizmosV1alpha1, `{apiVersion: example.com/v1alpha1, kind: Gizmo, metadata: {name: old-a, namespace: shop, labels: {tier: old}}, spec: {extra: kept, ports: [{port: 80}], template: {size: big}}}`)
	create(gizmosV1alpha1, `{apiVersion: example.com/v1alpha1, kind: Gizmo, metadata: {name: old-b, namespace: team, labels: {tier: old}}, spec: {ports: [{port: 443}, {port: 8443}]}}`)
	upgradeCRD(t, s, gizmosCRDUpgraded, func() bool {
		u, err := s.Dynamic.Resource(gizmosV1).Namespace("shop").Get(ctx, "old-a", metav1.GetOptions{})
		return err == nil && u.Object["status"] != nil
	})
	create(gizmosV1, `{apiVersion: example.com/v1, kind: Gizmo, metadata: {name: new-a, namespace: shop, labels: {tier: new}}, spec: {ports: [{port: 8080}]}}`)
	create(classesV1, `{apiVersion: gateway.networking.k8s.io/v1, kind: GatewayClass, metadata: {name: example}, spec: {controllerName: example.com/gateway-controller}}`)
	create(gatewaysV1, `{apiVersion: gateway.networking.k8s.io/v1, kind: Gateway, metadata: {name: web, namespace: shop}, spec: {gatewayClassName: example, listeners: [{name: http, protocol: HTTP, port: 80}]}}`)
	create(gatewaysV1, `{apiVersion: gateway.networking.k8s.io/v1, kind: Gateway, metadata: {name: api, namespace: team}, spec: {gatewayClassName: example, listeners: [{name: https, protocol: HTTPS, port: 443, hostname: api.example.com, tls: {certificateRefs: [{name: api-cert}]}}]}}`)

	// What the server defaults on read is not stored: the test would
	// prove nothing otherwise.
	if stored := etcdValue(t, etcd, "/registry/gateway.networking.k8s.io/gateways/shop/web"); strings.Contains(stored, `"status"`) {
		t.Fatalf("the gateway's status is stored: %s", stored)
	}
	if stored := etcdValue(t, etcd, "/registry/example.com/gizmos/shop/old-a"); strings.Contains(stored, `"mode"`) || !strings.Contains(stored, `"extra"`) {
		t.Fatalf("old-a is stored with its defaults, or without its removed field: %s", stored)
	}

	lists := [][]string{
		{"gizmos", "-n", "shop", "-o", "json"},
		{"gizmos", "-A", "-o", "yaml"},
		{"gizmos.v1alpha1.example.com", "-A", "-o", "json"},
		{"gizmos", "-A"},
		{"gizmos.v1alpha1.example.com", "-n", "shop", "-o", "wide"},
		{"gizmos", "-A", "-l", "tier=old", "-o", "json", "--chunk-size", "1"},
		{"gizmos", "-A", "-o", "custom-columns=NAME:.metadata.name,MODE:.spec.mode,PROTOCOLS:.spec.ports[*].protocol", "--sort-by=.metadata.name"},
		{"gateways", "-A", "-o", "json"},
		{"gateways", "-A"},
		{"gateways.v1beta1.gateway.networking.k8s.io", "-n", "shop", "-o", "yaml"},
		{"gatewayclasses"},
		{"gatewayclasses", "-o", "json", "--chunk-size", "0"},
	}
	t.Run("lists are the server's", func(t *testing.T) {
		for _, args := range lists {
			t.Run(caseName(args), func(t *testing.T) { agreeWithKubectl(t, k, s.EtcdURL, args...) })
		}
	})
	t.Run("a watch starts with the server's list", func(t *testing.T) {
		r := startWatch(t, "get", "gizmos", "-A", "-w", "-o", "json", "--output-watch-events", "--show-managed-fields", etcdFlag)
		r.waitFor(t, "the listed gizmos", func(out string) bool { return strings.Count(out, "\n") >= 3 })
		r.interrupt(t)
		listed := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(r.out.String()), "\n") {
			var e struct {
				Type   string          `json:"type"`
				Object json.RawMessage `json:"object"`
			}
			if err := json.Unmarshal([]byte(line), &e); err != nil || e.Type != "ADDED" {
				t.Fatalf("not an ADDED event (%v): %s", err, line)
			}
			var m struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			}
			if err := json.Unmarshal(e.Object, &m); err != nil {
				t.Fatal(err)
			}
			listed[m.Metadata.Namespace+"/"+m.Metadata.Name] = normalize(t, e.Object)
		}
		want := serverItems(t, s, "/apis/example.com/v1/gizmos", 0)
		if len(listed) != len(want) {
			t.Fatalf("the watch listed %d gizmos, the server lists %d", len(listed), len(want))
		}
		for name, served := range want {
			if listed[name] != served {
				t.Errorf("%s: the watch listed\n%s\nthe server lists\n%s", name, listed[name], served)
			}
		}
	})

	// The past: a snapshot and a revision, then changes through the
	// server that store what it defaulted (an update writes what it
	// read), and deletions.
	snapshot := saveSnapshot(t, etcd)
	rev := revisionOf(t, etcd)
	t.Run("a snapshot lists what the server lists", func(t *testing.T) {
		for _, args := range lists {
			t.Run(caseName(args), func(t *testing.T) { agreeWithKubectlOn(t, k, "--snapshot="+snapshot, args...) })
		}
	})
	atRev := map[string]map[string]string{}
	for _, path := range []string{"/apis/example.com/v1/gizmos", "/apis/gateway.networking.k8s.io/v1/gateways"} {
		atRev[path] = serverItems(t, s, path, rev)
	}
	servedBefore := map[string]string{
		"gizmos/old-b": normalize(t, serverGET(t, s, "/apis/example.com/v1/namespaces/team/gizmos/old-b")),
		"gateways/web": normalize(t, serverGET(t, s, "/apis/gateway.networking.k8s.io/v1/namespaces/shop/gateways/web")),
	}
	patch := []byte(`{"metadata":{"labels":{"checked":"yes"}}}`)
	for _, o := range []struct {
		gvr             schema.GroupVersionResource
		namespace, name string
	}{{gizmosV1, "shop", "old-a"}, {gatewaysV1, "team", "api"}} {
		if _, err := s.Dynamic.Resource(o.gvr).Namespace(o.namespace).Patch(ctx, o.name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "labeller"}); err != nil {
			t.Fatal(err)
		}
	}
	if stored := etcdValue(t, etcd, "/registry/example.com/gizmos/shop/old-a"); !strings.Contains(stored, `"mode":"legacy"`) {
		t.Fatalf("the server's update did not store what it defaulted: %s", stored)
	}
	if err := s.Dynamic.Resource(gizmosV1).Namespace("team").Delete(ctx, "old-b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Dynamic.Resource(gatewaysV1).Namespace("shop").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("--revision lists what the server lists at that revision", func(t *testing.T) {
		for path, arg := range map[string]string{"/apis/example.com/v1/gizmos": "gizmos", "/apis/gateway.networking.k8s.io/v1/gateways": "gateways"} {
			stdout := mustRun(t, "get", arg, "-A", "--revision", strconv.FormatInt(rev, 10), "-o", "json", "--show-managed-fields", etcdFlag)
			got := listItems(t, []byte(stdout))
			if len(got) == 0 || len(got) != len(atRev[path]) {
				t.Errorf("%s at %d: regctl lists %d, the server %d", arg, rev, len(got), len(atRev[path]))
			}
			for name, served := range atRev[path] {
				if got[name] != served {
					t.Errorf("%s %s at %d: regctl lists\n%s\nthe server\n%s", arg, name, rev, got[name], served)
				}
			}
		}
	})
	t.Run("diff --from sees only what changed", func(t *testing.T) {
		for _, from := range []string{snapshot, "rev:" + strconv.FormatInt(rev, 10)} {
			r, code := changesReport(t, "--from", from, "gizmos,gateways", "-A", etcdFlag)
			var got []string
			for _, o := range r.Objects {
				var fields []string
				for _, f := range o.Fields {
					fields = append(fields, f.Path)
				}
				got = append(got, o.Resource+" "+o.Namespace+"/"+o.Name+" "+o.Change+" "+strings.Join(fields, ","))
			}
			want := []string{
				"gizmos.example.com shop/old-a " + changes.Changed + " metadata.labels.checked",
				"gizmos.example.com team/old-b " + changes.Removed + " ",
				"gateways.gateway.networking.k8s.io shop/web " + changes.Removed + " ",
				"gateways.gateway.networking.k8s.io team/api " + changes.Changed + " metadata.labels",
			}
			slices.Sort(got)
			slices.Sort(want)
			if code != 1 || !slices.Equal(got, want) {
				t.Errorf("diff --from %s: exit %d, changes\n%s\nwant\n%s", from, code, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
	})
	t.Run("restore compares and writes what the server serves", func(t *testing.T) {
		stdout, stderr, code := run(t, "restore", "--from", snapshot, "gizmos", "-n", "shop", "--dry-run", etcdFlag)
		if code != 1 || !strings.Contains(stderr, "1 object differs") {
			t.Errorf("restore --dry-run: exit %d, %q; want 1 and one object that differs", code, stderr)
		}
		for _, want := range []string{"gizmo.example.com/new-a unchanged", "gizmo.example.com/old-a differs: metadata.labels.checked"} {
			if !strings.Contains(stdout, want+"\n") {
				t.Errorf("restore --dry-run said\n%s\nwant %q", stdout, want)
			}
		}
		mustRun(t, "restore", "--from", snapshot, "gizmos/old-b", "-n", "team", etcdFlag)
		mustRun(t, "restore", "--from", snapshot, "gateways/web", "-n", "shop", etcdFlag)
		for name, path := range map[string]string{
			"gizmos/old-b": "/apis/example.com/v1/namespaces/team/gizmos/old-b",
			"gateways/web": "/apis/gateway.networking.k8s.io/v1/namespaces/shop/gateways/web",
		} {
			if got, want := withoutResourceVersion(t, normalize(t, serverGET(t, s, path))), withoutResourceVersion(t, servedBefore[name]); got != want {
				t.Errorf("%s restored: the server serves\n%s\nit served\n%s", name, got, want)
			}
		}
	})
	t.Run("scan reads them as the server does", func(t *testing.T) {
		stdout := mustRun(t, "scan", "--only", "versions,corrupt", "-o", "json", "--snapshot="+snapshot)
		var r scan.Report
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatal(err)
		}
		var findings []string
		for _, f := range r.Findings {
			if strings.HasPrefix(f.Resource, "gizmos.") || strings.HasPrefix(f.Resource, "gateway") {
				findings = append(findings, f.Reason+" "+f.Key+": "+f.Detail)
			}
		}
		want := []string{
			scan.ReasonOldVersion + " /registry/example.com/gizmos/shop/old-a: stored at example.com/v1alpha1; the server writes example.com/v1",
			scan.ReasonOldVersion + " /registry/example.com/gizmos/team/old-b: stored at example.com/v1alpha1; the server writes example.com/v1",
			scan.ReasonUnknownFields + " /registry/example.com/gizmos/shop/old-a: fields the example.com/v1alpha1 Gizmo schema does not know: spec.extra; the server prunes them when it reads the value",
		}
		if !slices.Equal(findings, want) {
			t.Errorf("findings\n%s\nwant\n%s", strings.Join(findings, "\n"), strings.Join(want, "\n"))
		}
		for _, res := range r.Resources {
			if res.Resource == "gizmos.example.com" && (res.Versions == nil || res.Versions.Unread != 0 || res.Versions.Counts["example.com/v1alpha1"] != 2 || res.Versions.Counts["example.com/v1"] != 1) {
				t.Errorf("gizmos' versions: %+v", res.Versions)
			}
		}
	})
}

// upgradeCRD replaces the spec of a CRD the server serves with that of
// manifest, and waits until served says the server serves the new one.
func upgradeCRD(t *testing.T, s *apiserver.Server, manifest string, served func() bool) {
	t.Helper()
	next := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal([]byte(manifest), next); err != nil {
		t.Fatal(err)
	}
	client, err := apiextensionsclient.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	crd, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, next.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	crd.Spec = next.Spec
	if _, err := client.ApiextensionsV1().CustomResourceDefinitions().Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("upgrading customresourcedefinition %s: %v", next.Name, err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) { return served(), nil }); err != nil {
		t.Fatalf("waiting for the server to serve customresourcedefinition %s upgraded: %v", next.Name, err)
	}
}

// serverItems are the items of the server's list at path, normalized, by
// namespace/name: now, or read from etcd at exactly revision rev.
func serverItems(t *testing.T, s *apiserver.Server, path string, rev int64) map[string]string {
	t.Helper()
	req := s.Client.CoreV1().RESTClient().Get().AbsPath(path).SetHeader("Accept", "application/json")
	if rev != 0 {
		req = req.Param("resourceVersion", strconv.FormatInt(rev, 10)).Param("resourceVersionMatch", string(metav1.ResourceVersionMatchExact))
	}
	raw, err := req.DoRaw(context.Background())
	if err != nil {
		t.Fatalf("listing %s at %d: %v", path, rev, err)
	}
	return listItems(t, raw)
}

// listItems are the items of a JSON list (the server's, or kubectl's List
// that regctl prints), normalized, by namespace/name.
func listItems(t *testing.T, data []byte) map[string]string {
	t.Helper()
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		t.Fatalf("not a list: %v: %s", err, data)
	}
	out := map[string]string{}
	for _, item := range list.Items {
		var m struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		if err := json.Unmarshal(item, &m); err != nil {
			t.Fatal(err)
		}
		out[m.Metadata.Namespace+"/"+m.Metadata.Name] = normalize(t, item)
	}
	return out
}

// etcdValue is the value stored at key, as etcd holds it.
func etcdValue(t *testing.T, c *clientv3.Client, key string) string {
	t.Helper()
	resp, err := c.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 {
		t.Fatalf("%s is not stored", key)
	}
	return string(resp.Kvs[0].Value)
}

func withoutResourceVersion(t *testing.T, data string) string {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(data), &u.Object); err != nil {
		t.Fatal(err)
	}
	u.SetResourceVersion("")
	out, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
