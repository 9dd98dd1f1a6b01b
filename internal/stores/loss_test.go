package stores

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storagemap/maptest"
	"github.com/regctl/regctl/internal/storedvalue"
)

// A value a newer kube-apiserver wrote holds protobuf fields this release's
// types do not declare; its decoder skips them, and the store would write
// the object back without them. Every write over a stored value refuses
// that, and says what it would lose, unless told to drop them.
func TestAWriteNeverDropsFieldsThisReleaseDoesNotKnow(t *testing.T) {
	ctx := context.Background()
	s, etcd := maptest.Open(t)
	namespaces := s.Map.Handles["namespaces"]
	if _, err := Create(ctx, handle.Target{Handle: namespaces}, &api.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	opts := WriteOptions{Namespaces: NewNamespaceCache(namespaces)}
	cms := handle.Target{Handle: s.Map.Handles["configmaps"], Namespace: "default"}

	// newer creates a config map and gives its stored value a field
	// numbered past ConfigMap's last, as a newer server would.
	newer := func(name string, finalizers ...string) []byte {
		t.Helper()
		cm := &api.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Finalizers: finalizers}, Data: map[string]string{"a": "1"}}
		if _, err := Create(ctx, cms, cm, opts); err != nil {
			t.Fatal(err)
		}
		key := "/registry/configmaps/default/" + name
		resp, err := etcd.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		value := maptest.WithUnknownField(t, resp.Kvs[0].Value, 99)
		if _, err := etcd.Put(ctx, key, string(value)); err != nil {
			t.Fatal(err)
		}
		return value
	}
	stored := func(name string) []byte {
		t.Helper()
		resp, err := etcd.Get(ctx, "/registry/configmaps/default/"+name)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) == 0 {
			return nil
		}
		return resp.Kvs[0].Value
	}
	refused := func(what string, err error) {
		t.Helper()
		var loss *LossError
		if !errors.As(err, &loss) {
			t.Fatalf("%s: %v, want a refusal naming what would be lost", what, err)
		}
		for _, want := range []string{"/registry/configmaps/default/", "v1 ConfigMap", "#99", "written by a newer kube-apiserver", "--drop-unknown-fields"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %q does not say %q", what, err, want)
			}
		}
		if OutcomeOf(ctx, err) != Failed {
			t.Errorf("%s: a refusal is reported as a write that may have happened", what)
		}
	}

	// An update (replace, a status write, a migration's rewrite).
	value := newer("app")
	live, err := GetInternal(ctx, cms, "app")
	if err != nil {
		t.Fatal(err)
	}
	cm := live.(*api.ConfigMap)
	cm.Data["a"] = "2"
	_, err = Update(ctx, cms, cm.DeepCopy(), opts)
	refused("update", err)
	dry := opts
	dry.DryRun = true
	_, err = Update(ctx, cms, cm.DeepCopy(), dry)
	refused("dry-run update", err)
	if !bytes.Equal(stored("app"), value) {
		t.Fatal("a refused update changed the stored value")
	}
	drop := opts
	drop.DropUnknownFields = true
	if _, err := Update(ctx, cms, cm.DeepCopy(), drop); err != nil {
		t.Fatalf("update with DropUnknownFields: %v", err)
	}
	if _, fields, err := storedvalue.ProtobufFields(stored("app"), 5); err != nil || len(fields) > 0 {
		t.Errorf("after an update that drops them: fields %v, %v", fields, err)
	}

	// A delete that leaves the object in place, marked for deletion (a
	// finalizer here), writes it back: refused. One that removes it loses
	// nothing it was not asked to.
	value = newer("kept", "example.com/keep")
	_, err = Delete(ctx, cms, "kept", DeleteOptions{WriteOptions: opts})
	refused("delete marking for deletion", err)
	if !bytes.Equal(stored("kept"), value) {
		t.Fatal("a refused delete changed the stored value")
	}
	d, err := Delete(ctx, cms, "kept", DeleteOptions{WriteOptions: drop})
	if err != nil || d.Removed {
		t.Fatalf("delete with DropUnknownFields: removed %v, %v", d.Removed, err)
	}
	newer("gone")
	if d, err := Delete(ctx, cms, "gone", DeleteOptions{WriteOptions: opts}); err != nil || !d.Removed {
		t.Fatalf("a delete that removes the value: removed %v, %v", d.Removed, err)
	}
	if stored("gone") != nil {
		t.Error("the delete left the value")
	}
}

// A value stored at a more mature version than this release writes was
// written by a newer kube-apiserver: a write would store it at the older
// version. That is refused, and no flag drops it.
func TestAWriteNeverDowngradesAStorageVersion(t *testing.T) {
	ctx := context.Background()
	s, etcd := maptest.Open(t)
	h, obj, gv := maptest.NewerStored(t, s.Map.Handles)
	if h.Resource.Namespaced {
		t.Fatalf("%s: the test writes a cluster-scoped resource", h.Path)
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	m.SetName("newer")
	m.SetUID("uid-1")
	key, err := h.Key("", "newer")
	if err != nil {
		t.Fatal(err)
	}
	value := maptest.EncodeAt(t, obj, gv)
	if _, err := etcd.Put(ctx, key, string(value)); err != nil {
		t.Fatal(err)
	}
	target := handle.Target{Handle: h}
	live, err := GetInternal(ctx, target, "newer")
	if err != nil {
		t.Fatal(err)
	}
	for _, drop := range []bool{false, true} {
		_, err = Update(ctx, target, live.DeepCopyObject(), WriteOptions{DropUnknownFields: drop})
		var loss *LossError
		want := fmt.Sprintf("stored at %s, which is newer than the %s this release writes", gv, h.Route.StorageVersion)
		if !errors.As(err, &loss) || loss.StoredAt != gv.String() || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s, drop %v: %v, want a refusal to downgrade", h.Path, drop, err)
		}
	}
	resp, err := etcd.Get(ctx, key)
	if err != nil || !bytes.Equal(resp.Kvs[0].Value, value) {
		t.Fatalf("the stored value changed: %v", err)
	}
}
