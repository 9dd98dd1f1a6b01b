package etcdview

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/regctl/regctl/internal/etcdview/etcdtest"
)

// TestPrefixHistory reads the history of the keys under a prefix on a real
// etcd that compacted part of it: the values held at the compaction (one
// written before it, read where it was still current), then each write and
// deletion after it in revision order, none of the keys beside the prefix,
// and nothing written by the reading.
func TestPrefixHistory(t *testing.T) {
	_, c := etcdtest.Start(t)
	ctx := context.Background()
	put := func(key, value string) int64 {
		t.Helper()
		resp, err := c.Put(ctx, key, value)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Header.Revision
	}
	const prefix = "/registry/leases/"
	a1 := put(prefix+"kube-system/a", "a1")
	put(prefix+"kube-system/b", "b1")
	b2 := put(prefix+"kube-system/b", "b2")
	put("/registry/leasesx/not-under", "x")
	compacted := put("/registry/configmaps/default/c", "c")
	if _, err := c.Compact(ctx, compacted); err != nil {
		t.Fatal(err)
	}
	a2 := put(prefix+"kube-system/a", "a2")
	put("/registry/configmaps/default/c", "c2")
	del, err := c.Delete(ctx, prefix+"kube-system/b")
	if err != nil {
		t.Fatal(err)
	}
	c1 := put(prefix+"other/c", "c1")
	current := c1

	var got []KeyEvent
	oldest, now, err := PrefixHistory(ctx, c, prefix, 1, func(ev KeyEvent) error {
		got = append(got, ev)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if oldest != compacted || now != current {
		t.Errorf("revisions %d and %d, want the compaction's %d and the current %d", oldest, now, compacted, current)
	}
	want := []KeyEvent{
		{Key: prefix + "kube-system/a", Revision: a1, CreateRevision: a1, Value: []byte("a1"), ReadAt: compacted, Held: true},
		{Key: prefix + "kube-system/b", Revision: b2, CreateRevision: b2 - 1, Value: []byte("b2"), ReadAt: compacted, Held: true},
		{Key: prefix + "kube-system/a", Revision: a2, CreateRevision: a1, Value: []byte("a2"), ReadAt: a2},
		{Key: prefix + "kube-system/b", Revision: del.Header.Revision, Deleted: true, ReadAt: del.Header.Revision},
		{Key: prefix + "other/c", Revision: c1, CreateRevision: c1, Value: []byte("c1"), ReadAt: c1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("history:\n%+v\nwant\n%+v", got, want)
	}
	if rev, err := Revision(ctx, c); err != nil || rev != current {
		t.Errorf("the revision after reading is %d (%v), want %d: reading wrote", rev, err, current)
	}

	// What fn returns stops the reading, and is returned.
	stop := errors.New("enough")
	seen := 0
	_, _, err = PrefixHistory(ctx, c, prefix, 1, func(KeyEvent) error {
		if seen++; seen == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || seen != 3 {
		t.Errorf("a callback that stops at the third event: %v after %d", err, seen)
	}
}

// TestPrefixHistoryNeverCompacted reads every write of an etcd that never
// compacted: nothing is held at revision 1, and each write is an event.
func TestPrefixHistoryNeverCompacted(t *testing.T) {
	_, c := etcdtest.Start(t)
	ctx := context.Background()
	var want []int64
	for i := range 3 {
		resp, err := c.Put(ctx, fmt.Sprintf("/p/%d", i%2), "v")
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, resp.Header.Revision)
	}
	var got []int64
	oldest, _, err := PrefixHistory(ctx, c, "/p/", 500, func(ev KeyEvent) error {
		got = append(got, ev.Revision)
		return nil
	})
	if err != nil || oldest != 1 || !reflect.DeepEqual(got, want) {
		t.Errorf("oldest %d, revisions %v (%v), want 1 and %v", oldest, got, err, want)
	}
}
