package maptest

import (
	"bytes"
	"context"
	"slices"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/encoding/protowire"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/regctl/regctl/internal/logs/logstest"
	"github.com/regctl/regctl/internal/storedvalue"
)

func TestMain(m *testing.M) { logstest.Main(m) }

// fieldNumbers are the top-level field numbers of the object a stored
// protobuf value holds.
func fieldNumbers(t *testing.T, stored []byte) []protowire.Number {
	t.Helper()
	var u runtime.Unknown
	if err := u.Unmarshal(bytes.TrimPrefix(stored, protobufMagic)); err != nil {
		t.Fatal(err)
	}
	var out []protowire.Number
	for b := u.Raw; len(b) > 0; {
		number, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatalf("reading the object's fields: %v", protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(number, typ, b[n:])
		if m < 0 {
			t.Fatalf("reading field %d: %v", number, protowire.ParseError(m))
		}
		out, b = append(out, number), b[n+m:]
	}
	return out
}

// TestTheHelpersDoAsTheServerDoes: ConfigMaps writes through the server's
// store to the key its key function names; WithUnknownField adds a field
// the type does not declare and keeps the object readable; EncodeAt writes
// the version asked for, converted; NewerStored finds a resource stored
// below a version of its kind this release knows; Open's client is closed
// with its test.
func TestTheHelpersDoAsTheServerDoes(t *testing.T) {
	ctx := context.Background()
	target, create := ConfigMaps(t, "shop")
	create("settings")
	client, err := target.Handle.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	key, err := target.Handle.Key("shop", "settings")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Get(ctx, key)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("the config map created is not at %s: %v", key, err)
	}
	stored := resp.Kvs[0].Value
	with := WithUnknownField(t, stored, 1000)
	if slices.Contains(fieldNumbers(t, stored), 1000) || !slices.Contains(fieldNumbers(t, with), 1000) {
		t.Errorf("field 1000 in the stored value: %v, with it added: %v", fieldNumbers(t, stored), fieldNumbers(t, with))
	}
	obj, gvk, err := legacyscheme.Codecs.UniversalDeserializer().Decode(with, nil, nil)
	if cm, ok := obj.(*corev1.ConfigMap); err != nil || !ok || cm.Name != "settings" || gvk.Version != "v1" {
		t.Errorf("the value with a field added decodes to %v, %v (%v), want config map settings", obj, gvk, err)
	}

	v2 := autoscalingv2.SchemeGroupVersion
	hpa := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	encoded := EncodeAt(t, hpa, v2)
	obj, gvk, err = legacyscheme.Codecs.UniversalDeserializer().Decode(encoded, nil, nil)
	if got, ok := obj.(*autoscalingv2.HorizontalPodAutoscaler); err != nil || !ok || got.Name != "web" || gvk.GroupVersion() != v2 || !bytes.HasPrefix(encoded, protobufMagic) {
		t.Errorf("an object encoded at %s decodes as %v, %v (%v)", v2, obj, gvk, err)
	}

	var c *clientv3.Client
	t.Run("open", func(t *testing.T) {
		s, client := Open(t)
		c = client
		h, obj, gv := NewerStored(t, s.Map.Handles)
		kinds, _, err := legacyscheme.Scheme.ObjectKinds(obj)
		if err != nil || !slices.Contains(kinds, gv.WithKind(h.Route.Kind)) || !storedvalue.Newer(gv.String(), h.Route.StorageVersion) || h.OwnStore() == nil {
			t.Errorf("%s, stored at %s: an object of %v at %s", h.Path, h.Route.StorageVersion, kinds, gv)
		}
		if _, err := client.Get(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil {
			t.Errorf("the map's etcd: %v", err)
		}
	})
	if _, err := c.Get(ctx, "/registry/", clientv3.WithCountOnly()); err == nil {
		t.Error("the client of Open answers after its test ended")
	}
}
