package inspect

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

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
