package usage

import (
	"context"
	"fmt"
	"testing"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storagemap/maptest"
)

// Every key under the prefix is counted once: under the resource whose
// store holds its prefix, or, unclaimed, by its next path segment; a
// namespace's count holds only its keys. The counts are etcd's: keys and
// value bytes.
func TestKeysAreCountedByTheResourceThatHoldsThem(t *testing.T) {
	s, c := maptest.Open(t)
	ctx := context.Background()
	put := func(key, value string) {
		t.Helper()
		if _, err := c.Put(ctx, key, value); err != nil {
			t.Fatal(err)
		}
	}
	put("/registry/configmaps/a/one", "12345")
	put("/registry/configmaps/a/two", "123")
	put("/registry/configmaps/b/three", "1")
	put("/registry/secrets/a/s", "12")
	put("/registry/no-such-group/x", "1234")
	// Two paths store under one prefix: the first, in the map's order,
	// holds its keys.
	handles := []*handle.Handle{s.Map.Handles["configmaps"], s.Map.Handles["secrets"], s.Map.Handles["events.events.k8s.io"], s.Map.Handles["events"]}
	put("/registry/events/a/e", "1")

	all, err := Of(ctx, c, "/registry", handles, 2)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, u := range all {
		got[u.KeyPrefix] = fmt.Sprintf("%s %d keys %d bytes", u.Resource, u.Keys, u.Bytes)
	}
	want := map[string]string{
		"/registry/configmaps/":    "configmaps 3 keys 9 bytes",
		"/registry/secrets/":       "secrets 1 keys 2 bytes",
		"/registry/events/":        "events.events.k8s.io 1 keys 1 bytes",
		"/registry/no-such-group/": " 1 keys 4 bytes",
	}
	for prefix, w := range want {
		if got[prefix] != w {
			t.Errorf("%s: %q, want %q (all: %v)", prefix, got[prefix], w, got)
		}
	}

	inA, err := In(ctx, "a", handles, 0)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	for _, u := range inA {
		counts[u.Resource] = u.Keys
	}
	if counts["configmaps"] != 2 || counts["secrets"] != 1 || counts["events.events.k8s.io"] != 1 || len(inA) != 3 {
		t.Errorf("namespace a: %+v", inA)
	}
	if Root("/registry") != "/registry/" || Root("/registry/") != "/registry/" {
		t.Errorf("Root: %q, %q", Root("/registry"), Root("/registry/"))
	}
}
