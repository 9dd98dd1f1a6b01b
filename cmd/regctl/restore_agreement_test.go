package main

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/test/apiserver"
)

// restoreObjects are the objects of the namespace restored, in the order
// they are created; the replica set is owned by the deployment.
var restoreObjects = []struct {
	gvr      schema.GroupVersionResource
	manifest string
}{
	{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, `{apiVersion: v1, kind: ConfigMap, metadata: {name: app, labels: {app: web}}, data: {colour: blue}}`},
	{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, `{apiVersion: v1, kind: ConfigMap, metadata: {name: app2}, data: {size: large}}`},
	{schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, `{apiVersion: v1, kind: Secret, metadata: {name: creds}, stringData: {password: hunter2}}`},
	{schema.GroupVersionResource{Version: "v1", Resource: "services"}, `{apiVersion: v1, kind: Service, metadata: {name: web}, spec: {type: NodePort, ports: [{port: 80}], selector: {app: web}}}`},
	{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: nginx}]}}}}`},
	{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}, `{apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: web-5d4f}, spec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: nginx}]}}}}`},
	{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}, `{apiVersion: rbac.authorization.k8s.io/v1, kind: Role, metadata: {name: reader}, rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]}`},
	{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}, `{apiVersion: rbac.authorization.k8s.io/v1, kind: RoleBinding, metadata: {name: reader}, roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}, subjects: [{kind: User, name: jane}]}`},
	{schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, `{apiVersion: example.com/v1, kind: Widget, metadata: {name: w1}, spec: {size: large, color: red}}`},
}

// TestRestoreAgreesWithKubeAPIServer deletes a namespace through a real
// kube-apiserver (with aescbc encryption), as its namespace controller
// would, and brings it back from a snapshot with regctl: the server then
// serves every object as it did before (uid, ownerReferences,
// managedFields, cluster IP), its watches see each come back, secrets are
// encrypted, other namespaces are untouched, and a second restore writes
// nothing.
func TestRestoreAgreesWithKubeAPIServer(t *testing.T) {
	t.Parallel()
	encryption := encryptionFlag(t, "encryption.yaml", map[string]string{"secrets": aescbc("key1") + identityProvider})
	s := apiserver.Start(t, encryption)
	apiserver.CreateWidgetsCRD(t, s)
	ctx := context.Background()
	etcdFlag := "--etcd-servers=" + s.EtcdURL
	c := etcdClient(t, s.EtcdURL)

	for _, ns := range []string{"shop", "other"} {
		if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var deploymentUID string
	for _, o := range restoreObjects {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(o.manifest), &u.Object); err != nil {
			t.Fatal(err)
		}
		if o.gvr.Resource == "replicasets" {
			u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: types.UID(deploymentUID), Controller: ptr.To(true)}})
		}
		got, err := s.Dynamic.Resource(o.gvr).Namespace("shop").Create(ctx, u, metav1.CreateOptions{FieldManager: "restore-test"})
		if err != nil {
			t.Fatalf("creating %s: %v", o.gvr.Resource, err)
		}
		if o.gvr.Resource == "deployments" {
			deploymentUID = string(got.GetUID())
		}
	}
	keep, err := s.Client.CoreV1().ConfigMaps("other").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keep"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := servedObjects(t, s)
	snapshot := saveSnapshot(t, c)

	// After the snapshot: other namespaces change, and shop is deleted as
	// the namespace controller deletes one: its objects, then the
	// finalizer.
	keep.Data["v"] = "2"
	if _, err := s.Client.CoreV1().ConfigMaps("other").Update(ctx, keep, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deleteNamespace(t, s, "shop")
	watches := watchNamespace(t, s, "shop")

	stdout, stderr, code := run(t, "restore", "--from", snapshot, "-n", "shop", etcdFlag, encryption)
	if code != 0 {
		t.Fatalf("restore: exit %d\n%s%s", code, stdout, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	count := lines[len(lines)-1]
	lines = lines[:len(lines)-1]
	restored := slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return strings.HasPrefix(l, "event/") })
	if len(restored) != len(restoreObjects)+1 || lines[0] != "namespace/shop restored" || slices.Index(lines, "deployment.apps/web restored") > slices.Index(lines, "replicaset.apps/web-5d4f restored") {
		t.Errorf("restore said\n%s", stdout)
	}
	if want := strconv.Itoa(len(lines)) + " restored, 0 unchanged, 0 differ, 0 skipped from " + snapshot; count != want {
		t.Errorf("the restore's last line %q, want %q", count, want)
	}
	t.Run("the server serves every object as before", func(t *testing.T) {
		after := servedObjects(t, s)
		for key, was := range before {
			if now, ok := after[key]; !ok || !reflect.DeepEqual(now, was) {
				t.Errorf("%s now\n%v\nwas\n%v", key, now, was)
			}
		}
		svc, err := s.Client.CoreV1().Services("shop").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ip, err := s.Client.NetworkingV1().IPAddresses().Get(ctx, svc.Spec.ClusterIP, metav1.GetOptions{})
		if err != nil || ip.Spec.ParentRef == nil || ip.Spec.ParentRef.Name != "web" || ip.Spec.ParentRef.Namespace != "shop" {
			t.Errorf("the IPAddress of %s: %+v, %v", svc.Spec.ClusterIP, ip, err)
		}
		// The node port is taken in the server's bitmap again.
		port := svc.Spec.Ports[0].NodePort
		same := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "same-port"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80, NodePort: port}}}}
		if _, err := s.Client.CoreV1().Services("other").Create(ctx, same, metav1.CreateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "already allocated") {
			t.Errorf("the server gave node port %d to another service: %v", port, err)
		}
	})
	t.Run("watches see each object added", func(t *testing.T) {
		for _, w := range watches {
			w.wait(t)
		}
	})
	t.Run("secrets are encrypted with today's first key", func(t *testing.T) {
		kv, err := etcdview.ValueAt(ctx, c, "/registry/secrets/shop/creds", 0)
		if err != nil || kv == nil || !strings.HasPrefix(string(kv.Value), "k8s:enc:aescbc:v1:key1:") {
			t.Errorf("the secret is stored as %q (%v)", valuePrefix(kv), err)
		}
	})
	t.Run("other namespaces are untouched", func(t *testing.T) {
		got, err := s.Client.CoreV1().ConfigMaps("other").Get(ctx, "keep", metav1.GetOptions{})
		if err != nil || got.Data["v"] != "2" {
			t.Errorf("other/keep holds %v (%v), want what was written after the snapshot", got.Data, err)
		}
	})
	t.Run("a second restore writes nothing", func(t *testing.T) {
		rev := shopWritten(t, c)
		stdout, stderr, code := run(t, "restore", "--from", snapshot, "-n", "shop", etcdFlag, encryption)
		if code != 0 || strings.Count(stdout, " unchanged\n") != len(lines) || !strings.HasSuffix(stdout, "\n0 restored, "+strconv.Itoa(len(lines))+" unchanged, 0 differ, 0 skipped from "+snapshot+"\n") || shopWritten(t, c) != rev {
			t.Errorf("exit %d, shop last written at %d then %d\n%s%s", code, rev, shopWritten(t, c), stdout, stderr)
		}
	})

	app := func() *corev1.ConfigMap {
		got, err := s.Client.CoreV1().ConfigMaps("shop").Get(ctx, "app", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	t.Run("an object that differs is left alone, or overwritten", func(t *testing.T) {
		changed := app()
		changed.Data["colour"] = "green"
		if _, err := s.Client.CoreV1().ConfigMaps("shop").Update(ctx, changed, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		stdout, _, code := run(t, "restore", "--from", snapshot, "configmaps/app", "-n", "shop", etcdFlag)
		if code != 1 || stdout != "configmap/app differs: data.colour\n0 restored, 0 unchanged, 1 differs, 0 skipped from "+snapshot+"\n" || app().Data["colour"] != "green" {
			t.Errorf("without --overwrite: exit %d\n%s", code, stdout)
		}
		stdout, stderr, code := run(t, "restore", "--from", snapshot, "configmaps/app", "-n", "shop", "--overwrite", etcdFlag)
		if got := app(); code != 0 || stdout != "configmap/app overwritten: data.colour\n0 restored, 0 unchanged, 0 differ, 0 skipped, 1 overwritten from "+snapshot+"\n" || got.Data["colour"] != "blue" || got.UID != changed.UID {
			t.Errorf("with --overwrite: exit %d\n%s%s\nserved %v", code, stdout, stderr, got.Data)
		}
	})
	t.Run("from an earlier revision", func(t *testing.T) {
		rev := etcdRevision(t, c)
		if err := s.Client.CoreV1().ConfigMaps("shop").Delete(ctx, "app", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := run(t, "restore", "--from", "rev:"+strconv.FormatInt(rev, 10), "configmaps", "app", "-n", "shop", etcdFlag)
		if got := app(); code != 0 || stdout != "configmap/app restored\n1 restored, 0 unchanged, 0 differ, 0 skipped from rev:"+strconv.FormatInt(rev, 10)+"\n" || got.Data["colour"] != "blue" {
			t.Errorf("exit %d\n%s%s\nserved %v", code, stdout, stderr, got.Data)
		}
	})
	t.Run("a cluster IP taken meanwhile", func(t *testing.T) {
		web, err := s.Client.CoreV1().Services("shop").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Client.CoreV1().Services("shop").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		thief := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "thief"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ClusterIP: web.Spec.ClusterIP,
			Ports: []corev1.ServicePort{{Port: 80, NodePort: web.Spec.Ports[0].NodePort}}}}
		if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := s.Client.CoreV1().Services("other").Create(ctx, thief, metav1.CreateOptions{})
			return err == nil, nil
		}); err != nil {
			t.Fatalf("taking %s: %v", web.Spec.ClusterIP, err)
		}
		stdout, stderr, code := run(t, "restore", "--from", snapshot, "services", "-n", "shop", etcdFlag)
		// What holds the IP is named: the restore leaves the choice to
		// the operator.
		if code != 1 || !strings.HasPrefix(stdout, "service/web skipped: ") || !strings.Contains(stdout, "already allocated") ||
			!strings.Contains(stdout, ": "+web.Spec.ClusterIP+" is held by service other/thief") {
			t.Errorf("exit %d\n%s%s", code, stdout, stderr)
		}
		// A node port taken, the cluster IP free: no object records node
		// ports but the services themselves.
		if err := s.Client.CoreV1().Services("other").Delete(ctx, "thief", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		porter := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "porter"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort,
			Ports: []corev1.ServicePort{{Port: 80, NodePort: web.Spec.Ports[0].NodePort}}}}
		if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := s.Client.CoreV1().Services("other").Create(ctx, porter, metav1.CreateOptions{})
			return err == nil, nil
		}); err != nil {
			t.Fatalf("taking node port %d: %v", web.Spec.Ports[0].NodePort, err)
		}
		stdout, stderr, code = run(t, "restore", "--from", snapshot, "services", "-n", "shop", etcdFlag)
		if want := fmt.Sprintf(": node port %d is held by service other/porter\n", web.Spec.Ports[0].NodePort); code != 1 || !strings.HasPrefix(stdout, "service/web skipped: ") || !strings.Contains(stdout, want) {
			t.Errorf("exit %d\n%s%s\nwant %q", code, stdout, stderr, want)
		}
		if _, err := s.Client.CoreV1().Services("shop").Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("web was restored with another IP: %v", err)
		}
	})
	t.Run("nothing into a terminating namespace", func(t *testing.T) {
		if err := s.Client.CoreV1().ConfigMaps("shop").Delete(ctx, "app2", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := s.Client.CoreV1().Namespaces().Delete(ctx, "shop", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		rev := shopWritten(t, c)
		stdout, stderr, code := run(t, "restore", "--from", snapshot, "configmaps", "-n", "shop", etcdFlag)
		if code != 1 || !strings.Contains(stderr, "warning: 1 object not restored: namespace shop is terminating") || shopWritten(t, c) != rev {
			t.Errorf("exit %d\n%s%s", code, stdout, stderr)
		}
	})
}

// servedObjects are the restored objects as the server serves them, with
// what every write changes (resourceVersion) left out, by resource/name.
func servedObjects(t *testing.T, s *apiserver.Server) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, o := range restoreObjects {
		list, err := s.Dynamic.Resource(o.gvr).Namespace("shop").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range list.Items {
			unstructured.RemoveNestedField(item.Object, "metadata", "resourceVersion")
			out[o.gvr.Resource+"/"+item.GetName()] = item.Object
		}
	}
	ns, err := s.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Get(context.Background(), "shop", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	unstructured.RemoveNestedField(ns.Object, "metadata", "resourceVersion")
	out["namespaces/shop"] = ns.Object
	return out
}

// deleteNamespace deletes ns as the server and its namespace controller
// do: marked for deletion, each object in it deleted, the finalizer
// removed; then it is gone.
func deleteNamespace(t *testing.T, s *apiserver.Server, ns string) {
	t.Helper()
	ctx := context.Background()
	if err := s.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The server writes events of what it does (a cluster IP
	// allocated): they go too.
	gvrs := []schema.GroupVersionResource{{Version: "v1", Resource: "events"}}
	for _, o := range restoreObjects {
		gvrs = append(gvrs, o.gvr)
	}
	for _, gvr := range gvrs {
		if err := s.Dynamic.Resource(gvr).Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			t.Fatalf("deleting the %s of %s: %v", gvr.Resource, ns, err)
		}
	}
	got, err := s.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Spec.Finalizers = nil
	if _, err := s.Client.CoreV1().Namespaces().Finalize(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := s.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Fatalf("namespace %s not gone: %v", ns, err)
	}
}

// addedWatch is a watch of one resource in a namespace, through the
// server, and the names it saw added.
type addedWatch struct {
	resource string
	want     []string
	w        watch.Interface
}

// watchNamespace watches each restored resource in ns through the server.
func watchNamespace(t *testing.T, s *apiserver.Server, ns string) []*addedWatch {
	t.Helper()
	want := map[schema.GroupVersionResource][]string{}
	var order []schema.GroupVersionResource
	for _, o := range restoreObjects {
		var m struct {
			Metadata struct{ Name string }
		}
		if err := yaml.Unmarshal([]byte(o.manifest), &m); err != nil {
			t.Fatal(err)
		}
		if _, ok := want[o.gvr]; !ok {
			order = append(order, o.gvr)
		}
		want[o.gvr] = append(want[o.gvr], m.Metadata.Name)
	}
	var out []*addedWatch
	for _, gvr := range order {
		w, err := s.Dynamic.Resource(gvr).Namespace(ns).Watch(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		out = append(out, &addedWatch{resource: gvr.Resource, want: want[gvr], w: w})
	}
	return out
}

// wait waits until every object of the watch was added.
func (a *addedWatch) wait(t *testing.T) {
	t.Helper()
	seen := map[string]bool{}
	timeout := time.After(30 * time.Second)
	for len(seen) < len(a.want) {
		select {
		case ev := <-a.w.ResultChan():
			if ev.Type == watch.Added {
				u := ev.Object.(*unstructured.Unstructured)
				seen[u.GetName()] = true
			}
		case <-timeout:
			t.Errorf("the watch of %s saw %v added, want %v", a.resource, seen, a.want)
			return
		}
	}
}

// shopWritten is the revision anything of the namespace shop (its
// objects, the namespace, the IP addresses of its services) was last
// written at: the server writes elsewhere on its own (its leases).
func shopWritten(t *testing.T, c *clientv3.Client) int64 {
	t.Helper()
	resp, err := c.Get(context.Background(), "/registry/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	for _, kv := range resp.Kvs {
		key := string(kv.Key)
		if strings.Contains(key, "/shop/") || strings.HasSuffix(key, "/shop") || strings.Contains(key, "/ipaddresses/") {
			last = max(last, kv.ModRevision)
		}
	}
	return last
}

func etcdRevision(t *testing.T, c *clientv3.Client) int64 {
	t.Helper()
	rev, err := etcdview.Revision(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

func valuePrefix(kv *mvccpb.KeyValue) string {
	if kv == nil {
		return ""
	}
	return string(kv.Value[:min(len(kv.Value), 24)])
}
