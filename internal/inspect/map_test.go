package inspect

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/apis/coordination"

	"github.com/regctl/regctl/internal/clock"
	"github.com/regctl/regctl/internal/logs/logstest"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/storagemap/maptest"
	"github.com/regctl/regctl/internal/target"
)

func TestMain(m *testing.M) { logstest.Main(m) }

// TestInspectOnAMap inspects a config map written in JSON in the etcd of
// a default server's map, and one that was never written.
func TestInspectOnAMap(t *testing.T) {
	ctx := context.Background()
	s, main := maptest.Open(t)
	for _, data := range []string{"1", "2"} {
		value := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app","namespace":"shop"},"data":{"a":"` + data + `"}}`
		if _, err := main.Put(ctx, "/registry/configmaps/shop/app", value); err != nil {
			t.Fatal(err)
		}
	}
	configMaps, err := target.One(s.Map, target.Ref{Resource: "configmaps"}, target.Scope{Namespace: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Object(ctx, &out, configMaps, "app", Options{Output: render.Table}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/registry/configmaps/shop/app", "application/json", "v1, Kind=ConfigMap", "identity"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("inspect does not say %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := Object(ctx, &out, configMaps, "app", Options{Output: render.Table, History: true}); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 3 || !strings.Contains(lines[2], "data.a") {
		t.Errorf("history: a header and two revisions, the second changing data.a:\n%s", out.String())
	}

	err = Object(ctx, io.Discard, configMaps, "gone", Options{Output: render.Table})
	if want := `configmaps "gone" not found (no key /registry/configmaps/shop/gone)`; err == nil || err.Error() != want {
		t.Errorf("an object with no key: %v, want %q", err, want)
	}
	err = Object(ctx, io.Discard, configMaps, "gone", Options{Output: render.Table, History: true})
	if want := `configmaps "gone" not found (etcd holds no revision of key /registry/configmaps/shop/gone since its last compaction)`; err == nil || err.Error() != want {
		t.Errorf("the history of an object never written: %v, want %q", err, want)
	}
}

// TestHistoryTimesOnAMap tells when each revision of a config map was
// written: its creation by its creationTimestamp, which the Leases renewed
// around it agree with, and an update that wrote no time of its own by the
// renewals before and after it.
func TestHistoryTimesOnAMap(t *testing.T) {
	ctx := context.Background()
	s, main := maptest.Open(t)
	leases, err := s.Map.Handle(clock.LeasesPath)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	put := func(key, value string) {
		t.Helper()
		if _, err := main.Put(ctx, key, value); err != nil {
			t.Fatal(err)
		}
	}
	renew := func(at time.Duration) {
		t.Helper()
		holder := "apiserver-1"
		l := &coordination.Lease{ObjectMeta: metav1.ObjectMeta{Name: holder, Namespace: "kube-system"},
			Spec: coordination.LeaseSpec{HolderIdentity: &holder, RenewTime: &metav1.MicroTime{Time: base.Add(at)}}}
		data, err := runtime.Encode(leases.StorageCodec(), l)
		if err != nil {
			t.Fatal(err)
		}
		put("/registry/leases/kube-system/"+holder, string(data))
	}
	const key = "/registry/configmaps/shop/app"
	renew(0)
	put(key, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app","namespace":"shop","creationTimestamp":"2026-11-29T14:00:01Z"},"data":{"a":"1"}}`)
	renew(3 * time.Second)
	put(key, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app","namespace":"shop","creationTimestamp":"2026-11-29T14:00:01Z"},"data":{"a":"2"}}`)
	renew(6*time.Second + 500*time.Millisecond)

	configMaps, err := target.One(s.Map, target.Ref{Resource: "configmaps"}, target.Scope{Namespace: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Object(ctx, &out, configMaps, "app", Options{Output: render.Table, History: true, Clocks: leases}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "TIME") || !strings.Contains(lines[1], "2026-11-29T14:00:01Z") || !strings.Contains(lines[2], "between 2026-11-29T14:00:03Z and 14:00:06.5Z") {
		t.Errorf("history: the creation at 14:00:01, the update between the renewals at 14:00:03 and 14:00:06.5:\n%s", out.String())
	}
	out.Reset()
	if err := Object(ctx, &out, configMaps, "app", Options{Output: render.JSON, History: true, Clocks: leases}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"at": "2026-11-29T14:00:01Z"`, `"clock": "metadata.creationTimestamp"`, `"after": "2026-11-29T14:00:03Z"`, `"before": "2026-11-29T14:00:06.5Z"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("history as json does not hold %s:\n%s", want, out.String())
		}
	}
}
