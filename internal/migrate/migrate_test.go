package migrate

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/scan"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/storagemap/maptest"
	"github.com/regctl/regctl/internal/storedvalue"
	"github.com/regctl/regctl/internal/stores"
)

// put writes value at key as a server would have, and returns it.
func put(t *testing.T, etcd *clientv3.Client, key string, value []byte) []byte {
	t.Helper()
	if _, err := etcd.Put(context.Background(), key, string(value)); err != nil {
		t.Fatal(err)
	}
	return value
}

func get(t *testing.T, etcd *clientv3.Client, key string) []byte {
	t.Helper()
	resp, err := etcd.Get(context.Background(), key)
	if err != nil || len(resp.Kvs) == 0 {
		t.Fatalf("reading %s: %v", key, err)
	}
	return resp.Kvs[0].Value
}

// storedAt is the group version a stored protobuf value is at.
func storedAt(t *testing.T, value []byte) string {
	t.Helper()
	gvk, _, err := storedvalue.ProtobufFields(value, 1)
	if err != nil {
		t.Fatal(err)
	}
	return gvk.GroupVersion().String()
}

func openMap(t *testing.T) (*storagemap.Session, *clientv3.Client) {
	t.Helper()
	s, etcd := maptest.Open(t)
	if _, err := stores.Create(context.Background(), handle.Target{Handle: s.Map.Handles["namespaces"]}, &api.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, stores.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return s, etcd
}

// A migration to the storage version rewrites what this release reads
// whole, and keeps apart, unwritten, what a rewrite would lose part of: a
// value with fields a newer server wrote, and a value a newer server
// stored at a more mature version (never a downgrade).
func TestMigrateKeepsWhatThisReleaseWouldLose(t *testing.T) {
	ctx := context.Background()
	s, etcd := openMap(t)
	const hpas = "/registry/horizontalpodautoscalers/default/"
	hpa := func(name string) *autoscalingv1.HorizontalPodAutoscaler {
		return &autoscalingv1.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name), CreationTimestamp: metav1.Now()},
			Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"},
				MaxReplicas:    3,
			},
		}
	}
	old := put(t, etcd, hpas+"old", maptest.EncodeAt(t, hpa("old"), autoscalingv1.SchemeGroupVersion))
	if got := storedAt(t, old); got != "autoscaling/v1" || s.Map.Handles["horizontalpodautoscalers.autoscaling"].Route.StorageVersion == got {
		t.Fatalf("the old HPA is stored at %s, which is not an old version", got)
	}
	fields := put(t, etcd, hpas+"fields", maptest.WithUnknownField(t, maptest.EncodeAt(t, hpa("fields"), autoscalingv1.SchemeGroupVersion), 99))
	h, obj, gv := maptest.NewerStored(t, s.Map.Handles)
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	m.SetName("newer")
	newerKey, err := h.Key(m.GetNamespace(), "newer")
	if err != nil {
		t.Fatal(err)
	}
	newer := put(t, etcd, newerKey, maptest.EncodeAt(t, obj, gv))

	ks := handle.Keyspace{Client: etcd, EtcdPrefix: "/registry", Handles: s.Map.Ordered()}
	// A dry run tells them apart already, from what the values hold.
	dry, err := Run(ctx, ks, Request{Versions: true, ChunkSize: 100, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(dry.Resources) != 1 || dry.Resources[0].Selected != 1 || dry.Resources[0].Kept != 1 || len(dry.Kept) != 1 || dry.Kept[0].Key != hpas+"fields" {
		t.Errorf("dry run: %+v, kept %+v; want one HPA to rewrite and one kept", dry.Resources, dry.Kept)
	}
	var out bytes.Buffer
	err = Migrate(ctx, ks, Request{Versions: true, ChunkSize: 100, Output: render.YAML}, genericiooptions.IOStreams{Out: &out, ErrOut: &out})
	if !errors.Is(err, ErrNotDone) || !strings.Contains(err.Error(), "the regctl built for its release") {
		t.Fatalf("migrate: %v, want it not done, saying what to do with what it kept", err)
	}
	if got := storedAt(t, get(t, etcd, hpas+"old")); got != "autoscaling/v2" {
		t.Errorf("the old HPA is stored at %s after the migration", got)
	}
	if !bytes.Equal(get(t, etcd, hpas+"fields"), fields) {
		t.Error("the HPA with fields this release does not know was rewritten")
	}
	if !bytes.Equal(get(t, etcd, newerKey), newer) {
		t.Errorf("%s stored at %s was rewritten at %s", newerKey, gv, h.Route.StorageVersion)
	}
	report := out.String()
	for _, want := range []string{"key: " + hpas + "fields", "reason: unknown-fields", "kept: 1", "rewritten: 1"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report does not say %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, newerKey) {
		t.Errorf("a value at a newer version than this release writes was chosen:\n%s", report)
	}

	// The scan says why the newer value is left: a newer server's.
	scanned, err := scan.Run(ctx, ks, scan.Options{Sections: []string{scan.Versions}})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, f := range scanned.Findings {
		if f.Key == newerKey {
			found = f.Reason == scan.ReasonNewerVersion && strings.Contains(f.Detail, "newer kube-apiserver")
		}
	}
	if !found {
		t.Errorf("the scan finds no newer-version value at %s: %+v", newerKey, scanned.Findings)
	}

	// Told to drop them, the migration rewrites the value without the
	// fields, as this release's kube-apiserver would.
	out.Reset()
	if err := Migrate(ctx, ks, Request{Versions: true, ChunkSize: 100, DropUnknownFields: true, Output: render.YAML}, genericiooptions.IOStreams{Out: &out, ErrOut: &out}); err != nil {
		t.Fatalf("migrate --drop-unknown-fields: %v\n%s", err, out.String())
	}
	value := get(t, etcd, hpas+"fields")
	if _, unknown, err := storedvalue.ProtobufFields(value, 5); err != nil || len(unknown) > 0 || storedAt(t, value) != "autoscaling/v2" {
		t.Errorf("after --drop-unknown-fields: at %s with fields %v (%v)", storedAt(t, value), unknown, err)
	}
	if !bytes.Equal(get(t, etcd, newerKey), newer) {
		t.Error("--drop-unknown-fields downgraded a value a newer server stored")
	}
}
