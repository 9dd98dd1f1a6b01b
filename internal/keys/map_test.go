package keys

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/logs/logstest"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/storagemap/maptest"
	"github.com/regctl/regctl/internal/target"
)

func TestMain(m *testing.M) { logstest.Main(m) }

// TestKeysOnAMap lists, names and checks keys of a default server's map
// built on an ephemeral etcd, with three config map keys written in it.
func TestKeysOnAMap(t *testing.T) {
	ctx := context.Background()
	s, main := maptest.Open(t)
	var rev int64
	for _, key := range []string{"/registry/configmaps/shop/a", "/registry/configmaps/shop/b", "/registry/configmaps/other/c"} {
		resp, err := main.Put(ctx, key, "value")
		if err != nil {
			t.Fatal(err)
		}
		rev = resp.Header.Revision
	}
	// The usage of one namespace counts its keys alone.
	var inShop []etcdview.Usage
	var buf bytes.Buffer
	if err := Usage(ctx, handle.Keyspace{Client: main, EtcdPrefix: "/registry", Handles: s.Map.Ordered()}, Options{Output: render.JSON, ChunkSize: 10, Namespace: "shop"}, &buf); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf.Bytes(), &inShop); err != nil {
		t.Fatal(err)
	}
	for _, u := range inShop {
		want := int64(0)
		if u.Resource == "configmaps" {
			want = 2
		}
		if u.Keys != want || u.Resource == "namespaces" {
			t.Errorf("usage in shop: %+v", u)
		}
	}
	configMaps, err := target.One(s.Map, target.Ref{Resource: "configmaps"}, target.Scope{Namespace: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	// A page of one key at a time.
	if err := Of(ctx, &out, configMaps, nil, Options{Output: render.Table, ChunkSize: 1}); err != nil {
		t.Fatal(err)
	}
	if want := "/registry/configmaps/shop/a\n/registry/configmaps/shop/b\n"; out.String() != want {
		t.Errorf("keys %q, want %q", out.String(), want)
	}
	// Names are keys of the store's key function, read nowhere.
	out.Reset()
	if err := Of(ctx, &out, configMaps, []string{"a", "z"}, Options{Output: render.JSON}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"/registry/configmaps/shop/z"`) {
		t.Errorf("named keys: %s", out.String())
	}
	out.Reset()
	err = Of(ctx, &out, configMaps, []string{"a", "z"}, Options{Output: render.Table, Check: true})
	if err == nil || err.Error() != "no such key: /registry/configmaps/shop/z" {
		t.Errorf("checking a missing key: %v", err)
	}
	if !strings.Contains(out.String(), "/registry/configmaps/shop/a   true") {
		t.Errorf("the keys checked are printed before the error:\n%s", out.String())
	}
	var future *etcdview.FutureError
	if err := Of(ctx, io.Discard, configMaps, nil, Options{Output: render.Table, Revision: rev + 100}); !errors.As(err, &future) {
		t.Errorf("keys at a future revision: %v", err)
	}

	reviews, err := target.One(s.Map, target.Ref{Resource: "tokenreviews"}, target.Scope{Namespace: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	if err := Of(ctx, io.Discard, reviews, nil, Options{Output: render.Table}); err == nil || !strings.HasSuffix(err.Error(), " is not stored in etcd") {
		t.Errorf("keys of a resource that is not stored: %v", err)
	}

	out.Reset()
	if err := Usage(ctx, handle.Keyspace{Client: main, EtcdPrefix: s.Map.Table.EtcdPrefix, Handles: s.Map.Ordered()}, Options{Output: render.JSON, ChunkSize: 100}, &out); err != nil {
		t.Fatal(err)
	}
	var usage []etcdview.Usage
	if err := json.Unmarshal(out.Bytes(), &usage); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, u := range usage {
		if u.KeyPrefix == "/registry/configmaps/" {
			found = true
			if u.Keys != 3 || u.Bytes != 3*int64(len("value")) {
				t.Errorf("config maps' usage %+v, want 3 keys of 5 bytes", u)
			}
		}
	}
	if !found {
		t.Errorf("no usage of config maps in %s", out.String())
	}

	// A table lists the resources that hold keys, unless asked for the
	// others; json lists them all.
	rows := func(o Options) []string {
		t.Helper()
		var out bytes.Buffer
		o.Output, o.ChunkSize = render.Table, 100
		if err := Usage(ctx, handle.Keyspace{Client: main, EtcdPrefix: s.Map.Table.EtcdPrefix, Handles: s.Map.Ordered()}, o, &out); err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSpace(out.String()), "\n")[1:]
	}
	held := rows(Options{})
	for _, row := range held {
		if strings.Fields(row)[2] == "0" {
			t.Errorf("a resource without keys in the table: %q", row)
		}
	}
	if !slices.ContainsFunc(held, func(row string) bool { return strings.HasPrefix(row, "configmaps ") }) {
		t.Errorf("config maps are not in the table:\n%s", strings.Join(held, "\n"))
	}
	if all := rows(Options{ShowEmpty: true}); len(all) != len(usage) || len(held) >= len(all) {
		t.Errorf("--show-empty: %d rows, json %d, without it %d", len(all), len(usage), len(held))
	}
}
