package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/regctl/regctl/internal/stores"
)

// manifestFile writes a manifest to a temp file and returns its path.
func manifestFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const shopNamespace = `apiVersion: v1
kind: Namespace
metadata:
  name: shop
`

const webPod = `apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: shop
  labels: {app: web}
spec:
  containers:
  - name: c
    image: busybox
`

// rawValue reads the bytes etcd holds at key.
func (s *liveEtcd) rawValue(t *testing.T, key string) []byte {
	t.Helper()
	resp, err := s.client.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) == 0 {
		return nil
	}
	return resp.Kvs[0].Value
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	stdout, stderr, code := run(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	return stdout
}

func TestCreateWritesThroughTheStore(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	stdout, stderr, code := run(t, "create", "-f", manifestFile(t, shopNamespace+"---\n"+webPod), "-o", "json", s.flag())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// With -o the written objects are printed instead of what was done.
	if !strings.Contains(stderr, stores.BypassWarning) || strings.Contains(stderr+stdout, " created") {
		t.Errorf("stderr %q: want the warning, and no created lines with -o", stderr)
	}
	var list struct {
		Kind  string          `json:"kind"`
		Items []corev1.Pod    `json:"items"`
		Raw   json.RawMessage `json:"-"`
	}
	if err := json.Unmarshal([]byte(stdout), &list); err != nil || list.Kind != "List" || len(list.Items) != 2 {
		t.Fatalf("stdout %q: want a List of the two stored objects", stdout)
	}
	pod := list.Items[1]
	// The strategy and defaulting ran: uid, creation time, generation,
	// defaulted fields and the status the pod strategy sets on create.
	if pod.UID == "" || pod.CreationTimestamp.IsZero() || pod.Generation != 1 || pod.Spec.RestartPolicy != corev1.RestartPolicyAlways || pod.Status.Phase != corev1.PodPending || pod.Status.QOSClass != corev1.PodQOSBestEffort {
		t.Errorf("stored pod %+v: want uid, creationTimestamp, generation 1, defaults and Pending status", pod)
	}
	info := mustRun(t, "inspect", "pods/web", "-n", "shop", "-o", "json", s.flag())
	if !strings.Contains(info, `"encoding": "application/vnd.kubernetes.protobuf"`) || !strings.Contains(info, `"storedKind": "Pod"`) {
		t.Errorf("inspect: %s", info)
	}
}

func TestCreateEventGetsItsTTLLease(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace+`---
apiVersion: v1
kind: Event
metadata: {name: ev, namespace: shop}
involvedObject: {kind: Pod, name: web, namespace: shop}
reason: Started
`), s.flag())
	out := mustRun(t, "inspect", "events/ev", "-n", "shop", "-o", "json", s.flag())
	var info struct {
		Lease    string `json:"lease"`
		LeaseTTL int64  `json:"leaseTTL"`
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil || info.Lease == "" || info.LeaseTTL < 3000 {
		t.Errorf("event storage %s: want a lease of about --event-ttl (1h)", out)
	}
}

func TestInvalidWritesLeaveEtcdUnchanged(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace), s.flag())
	before := s.revision(t)
	for _, tc := range []struct {
		name     string
		manifest string
		args     []string
		want     string
	}{
		{"pod without containers", "apiVersion: v1\nkind: Pod\nmetadata: {name: empty, namespace: shop}\nspec: {containers: []}\n", nil,
			`Pod "empty" is invalid: spec.containers: Required value`},
		{"bad name", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Bad_Name, namespace: shop}\n", nil,
			`ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"`},
		{"empty namespace", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n", []string{"-n", ""},
			"`-n` is empty: name a namespace"},
		{"namespace that does not exist", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: nope}\n", nil,
			`namespaces "nope" not found`},
		{"unknown field", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: shop}\ncolour: red\n", nil,
			`strict decoding error: unknown field "colour"`},
		{"dry run", webPod, []string{"--dry-run"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"create", "-f", manifestFile(t, tc.manifest), s.flag()}, tc.args...)
			stdout, stderr, code := run(t, args...)
			if tc.want == "" {
				// A dry run writes nothing: no warning about writing.
				if code != 0 || stdout != "pod/web created (dry run)\n" || stderr != "" {
					t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
				}
			} else if code == 0 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q: want %q", code, stderr, tc.want)
			}
			if after := s.revision(t); after != before {
				t.Errorf("etcd revision moved from %d to %d", before, after)
			}
		})
	}
}

func TestCreateExistingIsAlreadyExists(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace+"---\n"+webPod), s.flag())
	value := s.rawValue(t, "/registry/pods/shop/web")
	_, stderr, code := run(t, "create", "-f", manifestFile(t, strings.Replace(webPod, "busybox", "nginx", 1)), s.flag())
	if code == 0 || !strings.Contains(stderr, `pods "web" already exists`) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if !bytes.Equal(s.rawValue(t, "/registry/pods/shop/web"), value) {
		t.Error("the stored value changed")
	}
}

func TestMalformedManifestsWriteNothing(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace), s.flag())
	// A CRD no apiextensions controller has established: nothing serves it.
	mustRun(t, "create", "-f", manifestFile(t, "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\n"+
		"spec: {group: example.com, scope: Namespaced, names: {plural: widgets, singular: widget, kind: Widget},\n"+
		"  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]}\n"), s.flag())
	before := s.revision(t)
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: good, namespace: shop}\n"
	for _, tc := range []struct {
		name, manifest string
		want           []string
	}{
		{"not yaml", cm + "---\n{{{ not: yaml\n", []string{"document 2: not YAML or JSON"}},
		{"unknown kind", cm + "---\napiVersion: v1\nkind: Gizmo\nmetadata: {name: g}\n", []string{`document 2: unknown kind "Gizmo" in v1`}},
		{"a custom resource of a CRD not established", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n",
			[]string{"document 1: example.com/v1 Widget is not served: customresourcedefinition widgets.example.com is not established"}},
		{"a group no API serves", "apiVersion: example.org/v1\nkind: Widget\nmetadata: {name: d}\n", []string{`document 1: apiVersion "example.org/v1" is not served`}},
		{"a version the group does not serve", "apiVersion: apps/v1beta1\nkind: Deployment\nmetadata: {name: d}\n", []string{`document 1: apiVersion "apps/v1beta1" is not served`}},
		{"list mixing good and bad", "apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(strings.TrimSpace(cm), "\n", "\n  ") + "\n- {apiVersion: v1, kind: Gizmo, metadata: {name: g}}\n- {kind: ConfigMap, metadata: {name: x}}\n",
			[]string{`document 1, item 2: unknown kind "Gizmo"`, "document 1, item 3: no apiVersion set"}},
		{"empty", "# nothing here\n", []string{"no objects found"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := run(t, "create", "-f", manifestFile(t, tc.manifest), s.flag())
			if code == 0 || stdout != "" {
				t.Fatalf("exit %d, stdout %q", code, stdout)
			}
			for _, want := range append(tc.want, "nothing was written") {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr %q: want %q", stderr, want)
				}
			}
			if after := s.revision(t); after != before {
				t.Errorf("etcd revision moved from %d to %d", before, after)
			}
		})
	}
}

func TestWriteFailuresAreReportedPerObject(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace), s.flag())
	m := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: shop}\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: shop}\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: shop}\n"
	stdout, stderr, code := run(t, "create", "-f", manifestFile(t, m), s.flag())
	if code == 0 {
		t.Error("exit 0 with a failed document")
	}
	if stdout != "configmap/a created\nconfigmap/b created\n" {
		t.Errorf("stdout %q: want a and b created", stdout)
	}
	for _, want := range []string{`document 2 (configmap/a): configmaps "a" already exists`, "1 of 3 objects were not created"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q: want %q", stderr, want)
		}
	}
}

func TestReplaceOptimisticConcurrency(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace+"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: shop}\ndata: {k: v1}\n"), s.flag())
	current := mustRun(t, "get", "configmaps/cfg", "-n", "shop", "-o", "yaml", s.flag())

	edited := strings.Replace(current, "k: v1", "k: v2", 1)
	mustRun(t, "replace", "-f", manifestFile(t, edited), s.flag())
	value := s.rawValue(t, "/registry/configmaps/shop/cfg")

	// The same edit again carries the old resourceVersion: Conflict.
	stale := strings.Replace(current, "k: v1", "k: v3", 1)
	_, stderr, code := run(t, "replace", "-f", manifestFile(t, stale), s.flag())
	if code == 0 || !strings.Contains(stderr, `Operation cannot be fulfilled on configmaps "cfg": the object has been modified`) {
		t.Errorf("stale replace: exit %d, stderr %q", code, stderr)
	}
	if !bytes.Equal(s.rawValue(t, "/registry/configmaps/shop/cfg"), value) {
		t.Error("a stale replace changed the stored value")
	}

	// Without a resourceVersion: refused, unless --force.
	bare := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: shop}\ndata: {k: v4}\n"
	if _, stderr, code := run(t, "replace", "-f", manifestFile(t, bare), s.flag()); code == 0 || !strings.Contains(stderr, "no metadata.resourceVersion") {
		t.Errorf("replace without resourceVersion: exit %d, %q", code, stderr)
	}
	mustRun(t, "replace", "-f", manifestFile(t, bare), "--force", s.flag())
	if got := mustRun(t, "get", "configmaps/cfg", "-n", "shop", "-o", "yaml", s.flag()); !strings.Contains(got, "k: v4") {
		t.Errorf("after --force: %s", got)
	}

	// Two replaces from the same version at once: exactly one wins.
	base := mustRun(t, "get", "configmaps/cfg", "-n", "shop", "-o", "yaml", s.flag())
	files := []string{manifestFile(t, strings.Replace(base, "k: v4", "k: a", 1)), manifestFile(t, strings.Replace(base, "k: v4", "k: b", 1))}
	codes := make([]int, 2)
	var wg sync.WaitGroup
	for i := range files {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, _, codes[i] = run(t, "replace", "-f", files[i], s.flag())
		}(i)
	}
	wg.Wait()
	if (codes[0] == 0) == (codes[1] == 0) {
		t.Errorf("concurrent replaces exited %v: want exactly one success", codes)
	}
}

func TestReplaceStatusSubresource(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace+"---\n"+webPod), s.flag())
	current := mustRun(t, "get", "pods/web", "-n", "shop", "-o", "yaml", s.flag())
	// Through the status store only status changes: the image edit is dropped.
	edited := strings.Replace(strings.Replace(current, "phase: Pending", "phase: Running", 1), "image: busybox", "image: nginx", 1)
	mustRun(t, "replace", "--subresource", "status", "-f", manifestFile(t, edited), s.flag())
	got := mustRun(t, "get", "pods/web", "-n", "shop", "-o", "yaml", s.flag())
	if !strings.Contains(got, "phase: Running") || !strings.Contains(got, "image: busybox") {
		t.Errorf("after a status replace:\n%s", got)
	}
}

func TestDeleteFollowsGracefulDeletionAndFinalizers(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	bound := strings.Replace(webPod, "spec:\n", "spec:\n  nodeName: node-1\n", 1)
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace+"---\n"+bound+"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: shop, labels: {tier: cache}}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: shop, labels: {tier: cache}}\n"), s.flag())

	// A bound pod with a grace period is only marked.
	stdout, stderr, _ := run(t, "delete", "pods/web", "-n", "shop", s.flag())
	if stdout != "pod \"web\" deleted from shop namespace\n" || !strings.Contains(stderr, "warning: pod/web marked for deletion: it stays until its finalizers are done or its grace period ends\n") {
		t.Errorf("graceful delete: stdout %q, stderr %q", stdout, stderr)
	}
	if got := mustRun(t, "get", "pods/web", "-n", "shop", "-o", "yaml", s.flag()); !strings.Contains(got, "deletionTimestamp:") {
		t.Errorf("pod after graceful delete:\n%s", got)
	}
	stdout, stderr, _ = run(t, "delete", "pods/web", "-n", "shop", "--grace-period=0", s.flag())
	if stdout != "pod \"web\" force deleted from shop namespace\n" || s.rawValue(t, "/registry/pods/shop/web") != nil {
		t.Errorf("delete --grace-period=0: stdout %q, stderr %q, key still there: %v", stdout, stderr, s.rawValue(t, "/registry/pods/shop/web") != nil)
	}

	// By selector, with dry run first.
	before := s.revision(t)
	mustRun(t, "delete", "configmaps", "-l", "tier=cache", "-n", "shop", "--dry-run", s.flag())
	if s.revision(t) != before {
		t.Error("a dry-run delete wrote")
	}
	stdout, stderr, _ = run(t, "delete", "configmaps", "-l", "tier=cache", "-n", "shop", s.flag())
	if stdout != "configmap \"a\" deleted from shop namespace\nconfigmap \"b\" deleted from shop namespace\n" {
		t.Errorf("delete -l: stdout %q, stderr %q", stdout, stderr)
	}

	// A namespace with finalizers goes to Terminating.
	stdout, stderr, _ = run(t, "delete", "namespaces/shop", s.flag())
	if stdout != "namespace \"shop\" deleted\n" || !strings.Contains(stderr, "warning: namespace/shop marked for deletion") {
		t.Errorf("namespace delete: stdout %q, stderr %q", stdout, stderr)
	}
	if got := mustRun(t, "get", "namespaces/shop", "-o", "yaml", s.flag()); !strings.Contains(got, "phase: Terminating") {
		t.Errorf("namespace after delete:\n%s", got)
	}
	// And refuses new content.
	_, stderr, code := run(t, "create", "-f", manifestFile(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: shop}\n"), s.flag())
	if code == 0 || !strings.Contains(stderr, "unable to create new content in namespace shop because it is being terminated") {
		t.Errorf("create in a terminating namespace: exit %d, %q", code, stderr)
	}
}

// typedLists is shaped as kube-prometheus ships its manifests: typed lists
// of objects, each list one document.
const typedLists = `apiVersion: v1
kind: ConfigMapList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: grafana-dashboard-apiserver, namespace: shop}
  data: {apiserver.json: '{"title": "Kubernetes / API server"}'}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: grafana-dashboard-nodes, namespace: shop}
  data: {nodes.json: '{"title": "Nodes"}'}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleList
items:
- apiVersion: rbac.authorization.k8s.io/v1
  kind: Role
  metadata: {name: prometheus-k8s, namespace: shop}
  rules:
  - {apiGroups: [""], resources: [services, endpoints, pods], verbs: [get, list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBindingList
items:
- apiVersion: rbac.authorization.k8s.io/v1
  kind: RoleBinding
  metadata: {name: prometheus-k8s, namespace: shop}
  roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: prometheus-k8s}
  subjects:
  - {kind: ServiceAccount, name: prometheus-k8s, namespace: monitoring}
`

// TestCreateAndReplaceTakeTypedLists: create -f and replace -f write the
// items of typed lists (ConfigMapList, RoleList, RoleBindingList), as
// kubectl does. (The manifests name no resourceVersion, so replace takes
// `--force`.)
func TestCreateAndReplaceTakeTypedLists(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace), s.flag())
	mustRun(t, "create", "-f", manifestFile(t, typedLists), s.flag())
	got := mustRun(t, "get", "configmaps,roles,rolebindings", "-n", "shop", "-o", "name", s.flag())
	want := "configmap/grafana-dashboard-apiserver\nconfigmap/grafana-dashboard-nodes\nrole.rbac.authorization.k8s.io/prometheus-k8s\nrolebinding.rbac.authorization.k8s.io/prometheus-k8s\n"
	if got != want {
		t.Errorf("after create -f, get says\n%s\nwant\n%s", got, want)
	}
	mustRun(t, "replace", "--force", "-f", manifestFile(t, strings.ReplaceAll(typedLists, `"Nodes"`, `"Nodes, again"`)), s.flag())
	if got := mustRun(t, "get", "configmaps/grafana-dashboard-nodes", "-n", "shop", "-o", "jsonpath={.data.nodes\\.json}", s.flag()); got != `{"title": "Nodes, again"}` {
		t.Errorf("after replace -f, the config map holds %q", got)
	}
}

// TestCreateReadsEveryFileGiven: -f may be given several times, as kubectl
// takes it; the files are read in turn, and with several a problem names
// its file.
func TestCreateReadsEveryFileGiven(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	ns, pod := manifestFile(t, shopNamespace), manifestFile(t, webPod)
	stdout := mustRun(t, "create", "-f", ns, "-f", pod, s.flag())
	if stdout != "namespace/shop created\npod/web created\n" {
		t.Errorf("stdout %q: want the namespace, then the pod", stdout)
	}
	before := s.revision(t)
	bad := manifestFile(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: shop}\ndata: {a: 1}\n")
	_, stderr, code := run(t, "create", "-f", manifestFile(t, configMapDoc("fine")), "-f", bad, s.flag())
	if code == 0 || !strings.Contains(stderr, "error: "+bad+", document 1: ") || !strings.Contains(stderr, "nothing was written") {
		t.Errorf("exit %d, stderr %q: want the bad file named, nothing written", code, stderr)
	}
	if s.revision(t) != before {
		t.Error("a refused manifest of two files wrote")
	}
}

// A failed write names its object as kubectl's name printer does, group
// included.
func TestFailedWritesNameTheObjectWithItsGroup(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	deployment := manifestFile(t, shopNamespace+"---\n"+mustReadFile(t, "../../examples/deployment.yaml"))
	mustRun(t, "create", "-f", deployment, s.flag())
	_, stderr, code := run(t, "create", "-f", manifestFile(t, mustReadFile(t, "../../examples/deployment.yaml")), s.flag())
	if code == 0 || !strings.Contains(stderr, `error: document 1 (deployment.apps/web): deployments.apps "web" already exists`) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func mustReadFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
