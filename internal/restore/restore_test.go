package restore

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/changes"
	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/logs/logstest"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/storagemap/maptest"
	"github.com/regctl/regctl/internal/stores"
)

func TestMain(m *testing.M) { logstest.Main(m) }

// cluster is a map on an etcd of its own with the namespace shop.
type cluster struct {
	t *testing.T
	s *storagemap.Session
	c *clientv3.Client
}

func newCluster(t *testing.T) *cluster {
	s, c := maptest.Open(t)
	k := &cluster{t: t, s: s, c: c}
	k.create("namespaces", "", &api.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}})
	return k
}

func (k *cluster) target(path, namespace string) handle.Target {
	return handle.Target{Handle: k.s.Map.Handles[path], Namespace: namespace}
}

// create writes obj through its store, as `regctl create` does, and
// returns it as stored.
func (k *cluster) create(path, namespace string, obj runtime.Object) runtime.Object {
	k.t.Helper()
	opts := stores.WriteOptions{Namespaces: stores.NewNamespaceCache(k.s.Map.Handles["namespaces"])}
	out, err := stores.Create(context.Background(), k.target(path, namespace), obj, opts)
	if err != nil {
		k.t.Fatal(err)
	}
	return out
}

func (k *cluster) revision() int64 {
	k.t.Helper()
	rev, err := etcdview.Revision(context.Background(), k.c)
	if err != nil {
		k.t.Fatal(err)
	}
	return rev
}

// request restores the config maps of shop from rev; names, when given,
// are the only ones.
func (k *cluster) request(rev int64, out *bytes.Buffer, names ...string) Request {
	targets := []handle.Target{k.target("namespaces", ""), k.target("configmaps", "shop")}
	return Request{
		From: changes.Side{Name: "rev:before", Revision: rev}, To: changes.Side{Name: "live", Now: true},
		Pairs:      changes.PairTargets(targets, targets, map[string][]string{"namespaces": {"shop"}, "configmaps": names}),
		ChunkSize:  2,
		Namespaces: k.s.Map.Handles["namespaces"],
		Timeout:    10 * time.Second,
		Out:        out, ErrOut: out, Output: render.Table,
	}
}

func (k *cluster) deleteConfigMaps() {
	k.t.Helper()
	if _, err := k.c.Delete(context.Background(), "/registry/configmaps/shop/", clientv3.WithPrefix()); err != nil {
		k.t.Fatal(err)
	}
}

func (k *cluster) configMap(name string) *api.ConfigMap {
	k.t.Helper()
	obj, err := stores.GetInternal(context.Background(), k.target("configmaps", "shop"), name)
	if err != nil {
		k.t.Fatal(err)
	}
	return obj.(*api.ConfigMap)
}

func configMap(name string, owner *api.ConfigMap) *api.ConfigMap {
	cm := &api.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", Labels: map[string]string{"app": "shop"}}, Data: map[string]string{"k": name}}
	if owner != nil {
		cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}}
	}
	return cm
}

// seed creates the config maps "owner" and "child" (owned by owner) and
// "plain" in shop, and returns them as stored with the revision after.
func (k *cluster) seed() (map[string]*api.ConfigMap, int64) {
	k.create("configmaps", "shop", configMap("owner", nil))
	owner := k.configMap("owner")
	k.create("configmaps", "shop", configMap("child", owner))
	k.create("configmaps", "shop", configMap("plain", nil))
	out := map[string]*api.ConfigMap{}
	for _, name := range []string{"owner", "child", "plain"} {
		out[name] = k.configMap(name)
	}
	return out, k.revision()
}

func TestObjectsComeBackAsStoredOwnersFirst(t *testing.T) {
	k := newCluster(t)
	before, rev := k.seed()
	k.deleteConfigMaps()
	ctx := context.Background()

	var out bytes.Buffer
	report, err := Run(ctx, k.request(rev, &out))
	if err != nil {
		t.Fatalf("%v\n%s", err, said(&out))
	}
	// The owner is written before the object that names it, though its
	// key comes after; one line counts what became of them.
	want := "namespace/shop unchanged\nconfigmap/owner restored\nconfigmap/plain restored\nconfigmap/child restored\n" +
		"3 restored, 1 unchanged, 0 differ, 0 skipped from rev:before\n"
	if said(&out) != want {
		t.Errorf("restore said\n%s\nwant\n%s", said(&out), want)
	}
	if len(report.Objects) != 4 {
		t.Errorf("report: %+v", report.Objects)
	}
	for name, was := range before {
		now := k.configMap(name)
		if now.UID != was.UID || !now.CreationTimestamp.Equal(&was.CreationTimestamp) || len(now.ManagedFields) != len(was.ManagedFields) ||
			now.Data["k"] != name || len(now.OwnerReferences) != len(was.OwnerReferences) {
			t.Errorf("%s came back as\n%+v\nwas\n%+v", name, now.ObjectMeta, was.ObjectMeta)
		}
		if now.ResourceVersion == was.ResourceVersion {
			t.Errorf("%s kept its resourceVersion %s", name, now.ResourceVersion)
		}
	}
	owner, child := revisions(t, k, "owner"), revisions(t, k, "child")
	if owner >= child {
		t.Errorf("owner written at %d, child at %d", owner, child)
	}

	t.Run("a second run has nothing to do", func(t *testing.T) {
		at := k.revision()
		out.Reset()
		if _, err := Run(ctx, k.request(rev, &out)); err != nil {
			t.Fatalf("%v\n%s", err, said(&out))
		}
		if strings.Count(said(&out), " unchanged\n") != 4 || !strings.HasSuffix(said(&out), "\n0 restored, 4 unchanged, 0 differ, 0 skipped from rev:before\n") || k.revision() != at {
			t.Errorf("second run said\n%s(revision %d, was %d)", said(&out), k.revision(), at)
		}
	})
}

// revisions is the revision the key of config map name was written at.
func revisions(t *testing.T, k *cluster, name string) int64 {
	t.Helper()
	kv, err := etcdview.ValueAt(context.Background(), k.c, "/registry/configmaps/shop/"+name, 0)
	if err != nil || kv == nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	return kv.ModRevision
}

func TestADryRunWritesNothing(t *testing.T) {
	k := newCluster(t)
	_, rev := k.seed()
	k.deleteConfigMaps()
	at := k.revision()
	var out bytes.Buffer
	req := k.request(rev, &out)
	req.DryRun = true
	if _, err := Run(context.Background(), req); err != nil {
		t.Fatalf("%v\n%s", err, said(&out))
	}
	if strings.Count(said(&out), "restored (dry run)") != 3 || k.revision() != at {
		t.Errorf("dry run said\n%s(revision %d, was %d)", said(&out), k.revision(), at)
	}
	if strings.Contains(out.String(), stores.BypassWarning) {
		t.Errorf("a dry run warns that it writes:\n%s", out.String())
	}
}

func TestWhatDiffersIsLeftAloneUnlessOverwritten(t *testing.T) {
	k := newCluster(t)
	_, rev := k.seed()
	ctx := context.Background()
	changed := k.configMap("plain")
	changed.Data["k"] = "changed"
	if _, err := stores.Update(ctx, k.target("configmaps", "shop"), changed, stores.WriteOptions{Namespaces: stores.NewNamespaceCache(k.s.Map.Handles["namespaces"])}); err != nil {
		t.Fatal(err)
	}
	// owner is deleted and created again: another object of its name.
	if _, err := k.c.Delete(ctx, "/registry/configmaps/shop/owner"); err != nil {
		t.Fatal(err)
	}
	k.create("configmaps", "shop", configMap("owner", nil))

	var out bytes.Buffer
	if _, err := Run(ctx, k.request(rev, &out)); err != ErrLeftAlone {
		t.Fatalf("got %v, want ErrLeftAlone\n%s", err, said(&out))
	}
	for _, line := range []string{"configmap/plain differs: data.k", "configmap/owner skipped: another object of the same name is stored now", "configmap/child unchanged", "1 object differs from rev:before and was left alone"} {
		if !strings.Contains(said(&out), line) {
			t.Errorf("no %q in\n%s", line, said(&out))
		}
	}
	if got := k.configMap("plain").Data["k"]; got != "changed" {
		t.Errorf("plain written over without --overwrite: %q", got)
	}

	out.Reset()
	req := k.request(rev, &out)
	req.Overwrite = true
	if _, err := Run(ctx, req); err != ErrLeftAlone { // owner stays another object
		t.Fatalf("got %v\n%s", err, said(&out))
	}
	if !strings.Contains(said(&out), "configmap/plain overwritten") || k.configMap("plain").Data["k"] != "plain" {
		t.Errorf("overwrite said\n%s, plain holds %q", said(&out), k.configMap("plain").Data["k"])
	}
	if uid := k.configMap("owner").UID; uid == "" || strings.Contains(said(&out), "configmap/owner overwritten") {
		t.Errorf("the recreated owner was overwritten:\n%s", said(&out))
	}
}

func TestNothingIsRestoredIntoATerminatingNamespace(t *testing.T) {
	k := newCluster(t)
	_, rev := k.seed()
	k.deleteConfigMaps()
	ctx := context.Background()
	ns, err := stores.GetInternal(ctx, k.target("namespaces", ""), "shop")
	if err != nil {
		t.Fatal(err)
	}
	terminating := ns.(*api.Namespace)
	terminating.Status.Phase = api.NamespaceTerminating
	if _, err := stores.ReplaceAsStored(ctx, k.target("namespaces", ""), terminating, terminating.UID, terminating.ResourceVersion, stores.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	at := k.revision()
	var out bytes.Buffer
	req := k.request(rev, &out)
	req.Pairs = req.Pairs[1:] // the config maps alone
	if _, err := Run(ctx, req); err != ErrLeftAlone {
		t.Fatalf("got %v\n%s", err, said(&out))
	}
	if said(&out) != "warning: 3 objects not restored: namespace shop is terminating: restore again once it is gone\n0 restored, 0 unchanged, 0 differ, 3 skipped from rev:before\n" || k.revision() != at {
		t.Errorf("restore said\n%s(revision %d, was %d)", said(&out), k.revision(), at)
	}
}

func TestAValueThisReleaseCannotReadIsNotRestored(t *testing.T) {
	k := newCluster(t)
	_, _ = k.seed()
	ctx := context.Background()
	key := "/registry/configmaps/shop/plain"
	kv, err := etcdview.ValueAt(ctx, k.c, key, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.c.Put(ctx, key, string(maptest.WithUnknownField(t, kv.Value, 999))); err != nil {
		t.Fatal(err)
	}
	rev := k.revision()
	k.deleteConfigMaps()
	var out bytes.Buffer
	if _, err := Run(ctx, k.request(rev, &out)); err != ErrLeftAlone {
		t.Fatalf("got %v\n%s", err, said(&out))
	}
	if !strings.Contains(said(&out), "configmap/plain skipped: restoring it would drop what this release cannot read") || !strings.Contains(said(&out), "configmap/owner restored") {
		t.Errorf("restore said\n%s", said(&out))
	}
	if kv, _ := etcdview.ValueAt(ctx, k.c, key, 0); kv != nil {
		t.Errorf("plain was written without its unknown field")
	}
}

func TestAnInterruptStopsBetweenObjects(t *testing.T) {
	k := newCluster(t)
	for i := range batch + 10 {
		k.create("configmaps", "shop", configMap("cm-"+strconv.Itoa(i), nil))
	}
	rev := k.revision()
	k.deleteConfigMaps()
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	req := k.request(rev, &out)
	// Cancelled once the first batch is written: the second is not begun.
	stop := &cancelAfter{at: batch, cancel: cancel}
	req.Out = stop
	report, err := Run(ctx, req)
	if err == nil || !strings.Contains(err.Error(), "restore interrupted: "+strconv.Itoa(batch)+" objects written") || !report.Interrupted {
		t.Fatalf("got %v (interrupted %v)\n%s", err, report.Interrupted, said(&out))
	}
	got, err := etcdview.Count(context.Background(), k.c, "/registry/configmaps/shop/")
	if err != nil || got != batch {
		t.Errorf("%d config maps written, want %d (%v)", got, batch, err)
	}
}

// cancelAfter cancels once at lines were written to it.
type cancelAfter struct {
	n, at  int
	cancel context.CancelFunc
}

func (c *cancelAfter) Write(p []byte) (int, error) {
	c.n += bytes.Count(p, []byte("\n"))
	if c.n >= c.at+1 { // the namespace's line, then the batch's
		c.cancel()
	}
	return len(p), nil
}

// said is what a restore said, without the warning every write command
// that writes starts its writes with.
func said(b *bytes.Buffer) string {
	return strings.ReplaceAll(b.String(), stores.BypassWarning+"\n", "")
}

// An overwrite writes only over the value it compared: the storage checks
// its uid and resourceVersion as preconditions on what it reads.
func TestAnOverwriteIsPreconditionedOnWhatItCompared(t *testing.T) {
	k := newCluster(t)
	ctx := context.Background()
	before, _ := k.seed()
	was := before["plain"]
	changed := k.configMap("plain")
	changed.Data["k"] = "changed"
	opts := stores.WriteOptions{Namespaces: stores.NewNamespaceCache(k.s.Map.Handles["namespaces"])}
	if _, err := stores.Update(ctx, k.target("configmaps", "shop"), changed, opts); err != nil {
		t.Fatal(err)
	}
	now := k.configMap("plain")
	for _, tc := range []struct {
		name            string
		uid, rv         string
		wantWrittenOver bool
	}{
		{"a resourceVersion written over since", string(was.UID), was.ResourceVersion, false},
		{"another uid", "another", now.ResourceVersion, false},
		{"what is stored", string(now.UID), now.ResourceVersion, true},
	} {
		_, err := stores.ReplaceAsStored(ctx, k.target("configmaps", "shop"), was, types.UID(tc.uid), tc.rv, opts)
		got := k.configMap("plain").Data["k"]
		if tc.wantWrittenOver != (err == nil) || tc.wantWrittenOver != (got == "plain") {
			t.Errorf("%s: %v, stored %q", tc.name, err, got)
		}
	}
}

// TestASourceThatHoldsNothingOfWhatIsNamedIsAnError: a restore of a
// namespace or of names the source does not hold (a typo, a backup of
// another day) writes nothing and says what matched nothing.
func TestASourceThatHoldsNothingOfWhatIsNamedIsAnError(t *testing.T) {
	k := newCluster(t)
	_, rev := k.seed()
	at := k.revision()
	var out bytes.Buffer
	req := k.request(rev, &out, "nope")
	req.Pairs = req.Pairs[1:] // the config maps alone
	req.Selection = "configmaps/nope -n shop"
	_, err := Run(context.Background(), req)
	var nothing *NothingError
	if !errors.As(err, &nothing) || err.Error() != "nothing to restore: rev:before holds nothing that matches `configmaps/nope -n shop`" {
		t.Errorf("got %v", err)
	}
	if said(&out) != "" || k.revision() != at {
		t.Errorf("restore said %q (revision %d, was %d)", said(&out), k.revision(), at)
	}
}
