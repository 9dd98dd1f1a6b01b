package why

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/logs/logstest"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/storagemap/maptest"
	"github.com/regctl/regctl/internal/target"
)

func TestMain(m *testing.M) { logstest.Main(m) }

const deleted = `"deletionTimestamp":"2026-11-29T14:00:00Z"`

// stuck is a namespace held in every way why tells apart, as a server
// and its controllers would have left it in etcd.
var stuck = map[string]string{
	"/registry/namespaces/shop": `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"shop","uid":"ns-1",` + deleted + `},"spec":{"finalizers":["kubernetes"]},
		"status":{"phase":"Terminating","conditions":[{"type":"NamespaceContentRemaining","status":"True","reason":"SomeResourcesRemain","message":"Some resources are remaining: pods. has 1 resource instances"}]}}`,
	"/registry/configmaps/shop/held":  `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"held","namespace":"shop","uid":"cm-1",` + deleted + `,"finalizers":["example.com/hold"]}}`,
	"/registry/configmaps/shop/plain": `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"plain","namespace":"shop","uid":"cm-2"}}`,
	"/registry/configmaps/other/held": `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"held","namespace":"other","uid":"cm-3","finalizers":["example.com/hold"]}}`,
	"/registry/pods/shop/web": `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"shop","uid":"pod-1",` + deleted + `,"deletionGracePeriodSeconds":30},
		"spec":{"nodeName":"node-1","containers":[{"name":"c","image":"nginx"}],"volumes":[{"name":"data","persistentVolumeClaim":{"claimName":"data"}}]}}`,
	"/registry/persistentvolumeclaims/shop/data": `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data","namespace":"shop","uid":"pvc-1","finalizers":["kubernetes.io/pvc-protection"]},
		"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}},"volumeName":"pv-1"}}`,
	"/registry/persistentvolumes/pv-1": `{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"pv-1","uid":"pv-1",` + deleted + `,"finalizers":["kubernetes.io/pv-protection"]},
		"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"hostPath":{"path":"/data"}}}`,
	"/registry/deployments/shop/app": `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"app","namespace":"shop","uid":"dep-1",` + deleted + `,"finalizers":["foregroundDeletion"]},
		"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`,
	"/registry/replicasets/shop/app-1": `{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"app-1","namespace":"shop","uid":"rs-1",
		"ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"app","uid":"dep-1","controller":true,"blockOwnerDeletion":true}]},
		"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`,
	"/registry/example.com/widgets/shop/w1": `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1","namespace":"shop","uid":"w-1",` + deleted + `,"finalizers":["example.com/cleanup"]}}`,
	"/registry/apiregistration.k8s.io/apiservices/v1beta1.metrics.k8s.io": `{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService","metadata":{"name":"v1beta1.metrics.k8s.io","uid":"as-1"},
		"spec":{"group":"metrics.k8s.io","version":"v1beta1","groupPriorityMinimum":100,"versionPriority":100,"service":{"namespace":"kube-system","name":"metrics-server"}},
		"status":{"conditions":[{"type":"Available","status":"False","reason":"ServiceNotFound","message":"service/metrics-server in \"kube-system\" is not present"}]}}`,
}

func keyspace(t *testing.T) (handle.Keyspace, target.Resolver) {
	t.Helper()
	s, c := maptest.Open(t)
	for key, value := range stuck {
		if _, err := c.Put(context.Background(), key, value); err != nil {
			t.Fatal(err)
		}
	}
	return handle.Keyspace{Client: c, EtcdPrefix: s.Map.Table.EtcdPrefix, Handles: s.Map.Ordered()}, s.Map
}

// TestANamespaceHeldEveryWay: every object stored in the namespace is
// listed (the leftover of a CRD that is gone too, none of another
// namespace), counted by resource and finalizer, with who removes each
// finalizer and what else holds each object; the unavailable APIService
// is named; the way out ends in finalizing by hand, with its warning.
func TestANamespaceHeldEveryWay(t *testing.T) {
	ctx := context.Background()
	ks, _ := keyspace(t)
	before, err := etcdview.Revision(ctx, ks.Client)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Namespace(ctx, ks, "shop", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Revision != before {
		t.Errorf("read at revision %d, want the current %d", r.Revision, before)
	}
	var got []string
	for _, o := range r.Objects {
		got = append(got, o.Resource+"/"+o.Name)
	}
	want := "configmaps/held configmaps/plain deployments.apps/app persistentvolumeclaims/data pods/web replicasets.apps/app-1 widgets.example.com/w1"
	if strings.Join(got, " ") != want {
		t.Errorf("objects %q, want %q", strings.Join(got, " "), want)
	}
	// Nothing etcd holds in the namespace is missed: every key with the
	// namespace's segment, read straight from etcd.
	resp, err := ks.Client.Get(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	var inEtcd, listed []string
	for _, kv := range resp.Kvs {
		if strings.Contains(string(kv.Key), "/shop/") {
			inEtcd = append(inEtcd, string(kv.Key))
		}
	}
	for _, o := range r.Objects {
		listed = append(listed, o.Key)
	}
	slices.Sort(listed)
	if !slices.Equal(inEtcd, listed) {
		t.Errorf("keys listed %q, etcd holds %q in the namespace", listed, inEtcd)
	}
	if got := joinCounts(r.Remaining); got != "configmaps 2, deployments.apps 1, persistentvolumeclaims 1, pods 1, replicasets.apps 1, widgets.example.com 1" {
		t.Errorf("remaining %s", got)
	}
	if got := joinCounts(r.FinalizersRemaining); got != "example.com/cleanup 1, example.com/hold 1, foregroundDeletion 1, kubernetes.io/pvc-protection 1" {
		t.Errorf("finalizers remaining %s", got)
	}
	if len(r.UnavailableAPIServices) != 1 || r.UnavailableAPIServices[0].Name != "v1beta1.metrics.k8s.io" || r.UnavailableAPIServices[0].Service != "kube-system/metrics-server" || r.UnavailableAPIServices[0].Reason != "ServiceNotFound" {
		t.Errorf("unavailable APIServices %+v", r.UnavailableAPIServices)
	}
	if joinCounts(r.GoneCRDs) != "widgets.example.com 1" {
		t.Errorf("gone CRDs %+v", r.GoneCRDs)
	}
	if r.Namespace == nil || r.Namespace.Phase != "Terminating" || len(r.Namespace.Conditions) != 1 || r.Namespace.SpecFinalizers[0].RemovedBy != "namespace-controller" {
		t.Errorf("namespace state %+v", r.Namespace)
	}

	var out bytes.Buffer
	if err := render.Print(&out, render.Table, r); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"namespaces/shop: Terminating since 2026-11-29T14:00:00Z",
		"finalizer kubernetes.io/pvc-protection: persistentvolumeclaim-protection-controller removes it once no pod uses the claim",
		"used by pods/web",
		"graceful deletion: waits for the kubelet of node node-1",
		"dependent replicasets.apps/app-1 blocks its foreground deletion (blockOwnerDeletion)",
		"blocks the foreground deletion of its owner deployments.apps/app",
		"widgets.example.com/w1: its CRD is gone",
		"v1beta1.metrics.k8s.io: service kube-system/metrics-server (ServiceNotFound",
		"kubectl delete apiservice v1beta1.metrics.k8s.io",
		"kubectl delete pod web -n shop --grace-period=0 --force",
		`kubectl patch configmaps held -n shop --type=json -p '[{"op":"test","path":"/metadata/finalizers/0","value":"example.com/hold"},{"op":"remove","path":"/metadata/finalizers/0"}]'`,
		"customresourcedefinition widgets.example.com is gone",
		"warning: 7 objects still stored in namespace shop would stay in etcd, orphaned: once the namespace is gone nothing serves or deletes them",
		"regctl replace --subresource finalize -f -",
		"3 objects are not being deleted yet: namespace-controller deletes them, pods first",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the tree does not say %q:\n%s", want, text)
		}
	}
	if strings.Index(text, "kubectl delete apiservice") > strings.Index(text, "last resort") {
		t.Errorf("finalizing by hand comes before the other steps:\n%s", text)
	}
	if after, _ := etcdview.Revision(ctx, ks.Client); after != before {
		t.Errorf("why moved the revision from %d to %d", before, after)
	}
}

// TestAnObjectAndItsDependents: a deployment deleted in the foreground is
// held by its replica set, which blocks owner deletion.
func TestAnObjectAndItsDependents(t *testing.T) {
	ctx := context.Background()
	ks, m := keyspace(t)
	dep, err := target.One(m, target.Ref{Resource: "deployments"}, target.Scope{Namespace: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := ObjectOf(ctx, ks, dep, "app", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Objects) != 1 || r.Objects[0].Name != "app-1" || r.Objects[0].Resource != "replicasets.apps" {
		t.Fatalf("dependents %+v", r.Objects)
	}
	if len(r.Object.HeldBy) != 1 || !strings.Contains(r.Object.HeldBy[0], "replicasets.apps/app-1") {
		t.Errorf("held by %q", r.Object.HeldBy)
	}
	if r.Object.Finalizers[0].RemovedBy != "garbage-collector-controller" {
		t.Errorf("foregroundDeletion removed by %q", r.Object.Finalizers[0].RemovedBy)
	}
	// A cluster-scoped object: its holders are looked for everywhere.
	pvs, err := target.One(m, target.Ref{Resource: "persistentvolumes"}, target.Scope{Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	r, err = ObjectOf(ctx, ks, pvs, "pv-1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Object.HeldBy) != 1 || r.Object.HeldBy[0] != "bound to persistentvolumeclaims/data -n shop" {
		t.Errorf("a volume held by its claim: %q", r.Object.HeldBy)
	}
	plain, err := target.One(m, target.Ref{Resource: "configmaps"}, target.Scope{Namespace: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	r, err = ObjectOf(ctx, ks, plain, "plain", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.WayOut) != 1 || !strings.Contains(r.WayOut[0].Do, "nothing holds it") {
		t.Errorf("an object not being deleted: %+v", r.WayOut)
	}
}

// TestANamespaceThatIsGone: what remains of a namespace whose object is
// gone is orphaned, and said so.
func TestANamespaceThatIsGone(t *testing.T) {
	ks, _ := keyspace(t)
	r, err := Namespace(context.Background(), ks, "other", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Gone || len(r.Objects) != 1 || len(r.WayOut) != 1 || !strings.Contains(r.WayOut[0].Do, "orphaned") {
		t.Errorf("a gone namespace: %+v", r)
	}
}

// TestValuesThatCannotBeReadAreStillListed: a resource encrypted with a
// key the flags do not give is said once, and its objects in the
// namespace are still listed by their keys.
func TestValuesThatCannotBeReadAreStillListed(t *testing.T) {
	ctx := context.Background()
	ks, _ := keyspace(t)
	if _, err := ks.Client.Put(ctx, "/registry/secrets/shop/db", "k8s:enc:aescbc:v1:key1:not-really-encrypted"); err != nil {
		t.Fatal(err)
	}
	r, err := Namespace(ctx, ks, "shop", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Unread) != 1 || r.Unread[0].Resource != "secrets" || !strings.Contains(r.Unread[0].Reason, "aescbc:v1:key1") {
		t.Errorf("unread %+v", r.Unread)
	}
	found := false
	for _, o := range r.Objects {
		found = found || o.Key == "/registry/secrets/shop/db" && o.Unreadable == valueUnread
	}
	steps := 0
	for _, s := range r.WayOut {
		if strings.Contains(s.Do, "secrets") {
			steps++
		}
	}
	if !found || steps != 1 {
		t.Errorf("the secret listed: %v; steps about secrets: %d, want 1", found, steps)
	}
}
