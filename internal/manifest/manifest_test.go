package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/resource"
)

// kubePrometheusLists is shaped as kube-prometheus ships its manifests:
// typed lists (ConfigMapList, RoleBindingList, RoleList) whose items name
// their apiVersion and kind, next to plain objects. A typed list whose
// items name neither is there for the rule kubectl applies to them.
const kubePrometheusLists = `apiVersion: v1
kind: ConfigMapList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: grafana-dashboard-alertmanager-overview
    namespace: monitoring
  data:
    alertmanager-overview.json: '{"title": "Alertmanager / Overview"}'
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: grafana-dashboard-apiserver
    namespace: monitoring
  data:
    apiserver.json: '{"title": "Kubernetes / API server"}'
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBindingList
items:
- apiVersion: rbac.authorization.k8s.io/v1
  kind: RoleBinding
  metadata:
    name: prometheus-k8s
    namespace: default
  roleRef:
    apiGroup: rbac.authorization.k8s.io
    kind: Role
    name: prometheus-k8s
  subjects:
  - kind: ServiceAccount
    name: prometheus-k8s
    namespace: monitoring
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleList
items:
- apiVersion: rbac.authorization.k8s.io/v1
  kind: Role
  metadata:
    name: prometheus-k8s
    namespace: default
  rules:
  - apiGroups: [""]
    resources: [services, endpoints, pods]
    verbs: [get, list, watch]
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: prometheus-k8s
  namespace: monitoring
---
apiVersion: v1
kind: ConfigMapList
items:
- metadata: {name: no-kind, namespace: monitoring}
  data: {a: b}
`

// TestListsAreFlattenedAsKubectlFlattensThem reads the stream as kubectl
// does, with cli-runtime's resource builder (unstructured, local, flattened,
// the objects kubectl would send), and as regctl does: the same objects in
// the same order.
func TestListsAreFlattenedAsKubectlFlattensThem(t *testing.T) {
	infos, err := resource.NewLocalBuilder().Unstructured().Stream(strings.NewReader(kubePrometheusLists), "kube-prometheus").Flatten().Do().Infos()
	if err != nil {
		t.Fatal(err)
	}
	objs, errs := Read(strings.NewReader(kubePrometheusLists))
	if len(errs) > 0 {
		t.Fatalf("regctl refuses what kubectl accepts: %v", errs)
	}
	if len(objs) != len(infos) {
		t.Fatalf("regctl reads %d objects, kubectl %d", len(objs), len(infos))
	}
	for i, info := range infos {
		o := objs[i]
		gvk := info.Object.GetObjectKind().GroupVersionKind()
		if o.GVK != gvk || o.Name != info.Name || o.Namespace != info.Namespace {
			t.Errorf("object %d (%s): regctl reads %s %s/%s, kubectl %s %s/%s", i+1, o.Where(), o.GVK, o.Namespace, o.Name, gvk, info.Namespace, info.Name)
		}
		want, err := json.Marshal(info.Object)
		if err != nil {
			t.Fatal(err)
		}
		var got, wantObj map[string]any
		if err := json.Unmarshal(o.JSON, &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(want, &wantObj); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, wantObj) {
			t.Errorf("object %d (%s): regctl sends\n%s\nkubectl\n%s", i+1, o.Where(), o.JSON, want)
		}
	}
}

// TestListsInListsAreRefusedAsKubectlRefusesThem: kubectl's flattening
// cannot read a List inside a List (apimachinery's ExtractList takes the
// inner one for an object); regctl writes nothing from it either.
func TestListsInListsAreRefusedAsKubectlRefusesThem(t *testing.T) {
	const nested = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: List
  items:
  - {apiVersion: v1, kind: Secret, metadata: {name: inner, namespace: monitoring}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: outer, namespace: monitoring}}
`
	if _, err := resource.NewLocalBuilder().Unstructured().Stream(strings.NewReader(nested), "nested").Flatten().Do().Infos(); err == nil {
		t.Fatal("kubectl reads a List inside a List; this test expects it not to")
	}
	if objs, errs := Read(strings.NewReader(nested)); len(errs) == 0 {
		t.Errorf("regctl reads a List inside a List kubectl refuses: %d objects", len(objs))
	}
}

// Binary input is said to be so in one error that quotes none of it.
func TestBinaryInputIsNamedAndNotQuoted(t *testing.T) {
	for _, data := range [][]byte{
		{0x1f, 0x8b, 0x08, 0x00, 'a', 'b'},             // gzip
		[]byte("apiVersion: v1\nkind: \xff\xfe\x00\n"), // NUL and bad UTF-8
		[]byte("kind: Config\xc3"),                     // bad UTF-8 at the end of the stream
	} {
		objs, errs := Read(bytes.NewReader(data))
		if len(objs) != 0 || len(errs) != 1 || !errors.Is(errs[0], ErrBinary) {
			t.Errorf("%q: %v, %v; want ErrBinary", data, objs, errs)
		}
	}
	// UTF-8 text is no binary, however far from ASCII.
	if objs, errs := Read(strings.NewReader("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: café-ünïcødé}\n")); len(objs) != 1 || len(errs) != 0 {
		t.Errorf("text: %v, %v", objs, errs)
	}
}
