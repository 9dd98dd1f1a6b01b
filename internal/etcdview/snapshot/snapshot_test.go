package snapshot

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/storage/mvcc"
	"go.etcd.io/etcd/server/v3/storage/schema"

	"github.com/regctl/regctl/internal/etcdview/embedded"
	"github.com/regctl/regctl/internal/etcdview/etcdtest"
)

func sum(t *testing.T, path string) [32]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(data)
}

// describe prints a range response's keys, values, revisions and counts,
// and its error, for comparing two etcds' answers.
func describe(resp *clientv3.GetResponse, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "count=%d more=%t\n", resp.Count, resp.More)
	for _, kv := range resp.Kvs {
		fmt.Fprintf(&b, "%s=%q create=%d mod=%d version=%d lease=%d\n", kv.Key, kv.Value, kv.CreateRevision, kv.ModRevision, kv.Version, kv.Lease)
	}
	return b.String()
}

// TestSnapshotReadsAsTheLiveEtcd writes keys with a history (updates,
// deletions, a lease, a compaction), saves a snapshot, and asks the same
// range requests of the live etcd and of the snapshot: the answers are
// the same, and the file is the same bytes after.
func TestSnapshotReadsAsTheLiveEtcd(t *testing.T) {
	e, err := embedded.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	live := etcdtest.Client(t, e.ClientURL)
	ctx := context.Background()
	put := func(k, v string, opts ...clientv3.OpOption) int64 {
		resp, err := live.Put(ctx, k, v, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Header.Revision
	}
	for i := range 30 {
		put(fmt.Sprintf("/registry/pods/ns%d/pod%02d", i%3, i), fmt.Sprintf("v1-%d", i))
	}
	compactAt := put("/registry/configmaps/a/x", "old")
	put("/registry/configmaps/a/x", "new")
	if _, err := live.Compact(ctx, compactAt); err != nil {
		t.Fatal(err)
	}
	afterCompact := put("/registry/pods/ns0/pod00", "v2")
	if _, err := live.Delete(ctx, "/registry/pods/ns1/pod01"); err != nil {
		t.Fatal(err)
	}
	lease, err := live.Grant(ctx, 3600)
	if err != nil {
		t.Fatal(err)
	}
	put("/registry/events/ns0/e1", "event", clientv3.WithLease(lease.ID))
	put("/registry/pods/ns1/pod01", "recreated")

	path := filepath.Join(t.TempDir(), "snapshot.db")
	etcdtest.SaveSnapshot(t, live, path)
	before := sum(t, path)
	snap, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	fromSnap := etcdtest.Client(t, snap.ClientURL)

	requests := []struct {
		key  string
		opts []clientv3.OpOption
	}{
		{"/registry/pods/", []clientv3.OpOption{clientv3.WithPrefix()}},
		{"/registry/pods/", []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithLimit(7)}},
		{"/registry/pods/ns1/", []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithKeysOnly()}},
		{"/registry/", []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithKeysOnly()}},
		{"/registry/", []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithLimit(3), clientv3.WithMinModRev(afterCompact)}},
		{"/registry/pods/", []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithRev(afterCompact)}},
		{"/registry/", []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithCountOnly()}},
		{"\x00", []clientv3.OpOption{clientv3.WithFromKey(), clientv3.WithCountOnly()}},
		{"/registry/pods/ns0/pod00", nil},
		{"/registry/pods/ns0/pod00", []clientv3.OpOption{clientv3.WithRev(afterCompact - 1)}},
		{"/registry/pods/ns1/pod01", []clientv3.OpOption{clientv3.WithRev(afterCompact + 1)}},
		{"/registry/pods/", []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithRev(afterCompact)}},
		{"/registry/pods/ns2", []clientv3.OpOption{clientv3.WithRange("/registry/pods/ns3")}},
		{"/registry/pods/", []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithMinModRev(afterCompact)}},
		{"/registry/configmaps/a/x", []clientv3.OpOption{clientv3.WithRev(compactAt - 1)}},
		{"/registry/pods/", []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithRev(1 << 40)}},
		{"/registry/none", nil},
	}
	for _, r := range requests {
		want := describe(live.Get(ctx, r.key, r.opts...))
		got := describe(fromSnap.Get(ctx, r.key, r.opts...))
		if got != want {
			t.Errorf("get %q: the snapshot answers\n%s\nthe live etcd\n%s", r.key, got, want)
		}
	}
	// A compacted revision and a future one are etcd's own errors.
	if _, err := fromSnap.Get(ctx, "/registry/pods/", clientv3.WithPrefix(), clientv3.WithRev(compactAt-1)); !errors.Is(err, rpctypes.ErrCompacted) {
		t.Errorf("a compacted revision: %v", err)
	}
	if _, err := fromSnap.Get(ctx, "/registry/pods/", clientv3.WithPrefix(), clientv3.WithRev(1<<40)); !errors.Is(err, rpctypes.ErrFutureRev) {
		t.Errorf("a future revision: %v", err)
	}
	// Each range answers at the snapshot's revision, the live one's when it
	// was saved.
	liveResp, _ := live.Get(ctx, "x")
	snapResp, _ := fromSnap.Get(ctx, "x")
	if snapResp.Header.Revision != liveResp.Header.Revision {
		t.Errorf("snapshot revision %d, live %d", snapResp.Header.Revision, liveResp.Header.Revision)
	}
	// A watch from a past revision replays the same history, and one from
	// before the compaction is told the compaction's revision.
	current := liveResp.Header.Revision
	var replays []string
	for _, w := range []struct {
		key  string
		opts []clientv3.OpOption
	}{
		{"/registry/pods/", []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithRev(afterCompact), clientv3.WithPrevKV()}},
		{"/registry/pods/ns1/pod01", []clientv3.OpOption{clientv3.WithRev(compactAt)}},
		{"\x00", []clientv3.OpOption{clientv3.WithFromKey(), clientv3.WithRev(compactAt + 1)}},
		{"\x00", []clientv3.OpOption{clientv3.WithFromKey(), clientv3.WithRev(1)}},
	} {
		want := replayed(t, live, current, w.key, w.opts...)
		got := replayed(t, fromSnap, current, w.key, w.opts...)
		if got != want {
			t.Errorf("watch %q: the snapshot replays\n%s\nthe live etcd\n%s", w.key, got, want)
		}
		replays = append(replays, got)
	}
	if !strings.Contains(replays[0], "DELETE /registry/pods/ns1/pod01") || !strings.Contains(replays[0], `prev="v1-0"`) || replays[3] != fmt.Sprintf("compacted at %d\n", compactAt) {
		t.Errorf("the watches did not see the history written:\n%s", strings.Join(replays, "---\n"))
	}
	ttl, err := fromSnap.TimeToLive(ctx, lease.ID)
	if err != nil || ttl.GrantedTTL != 3600 || ttl.TTL != -1 {
		t.Errorf("lease in the snapshot: %+v, %v; want granted 3600, expired", ttl, err)
	}
	// Writes are refused.
	if _, err := fromSnap.Put(ctx, "/registry/pods/ns0/new", "x"); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("a put to the snapshot: %v", err)
	}
	if err := snap.Close(); err != nil {
		t.Fatal(err)
	}
	if sum(t, path) != before {
		t.Error("reading the snapshot changed its file")
	}
}

// TestAScheduledCompactionIsACompaction reads a snapshot saved while a
// compaction was scheduled and not yet finished, as a snapshot taken right
// after `etcdctl compact` can be: etcd restored from it finishes the
// compaction, so its revisions are compacted on the snapshot too.
func TestAScheduledCompactionIsACompaction(t *testing.T) {
	e, err := embedded.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	live := etcdtest.Client(t, e.ClientURL)
	ctx := context.Background()
	var revs []int64
	for i := range 5 {
		resp, err := live.Put(ctx, "/registry/configmaps/a/x", fmt.Sprint(i))
		if err != nil {
			t.Fatal(err)
		}
		revs = append(revs, resp.Header.Revision)
	}
	path := filepath.Join(t.TempDir(), "snapshot.db")
	etcdtest.SaveSnapshot(t, live, path)
	scheduled := revs[3]
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(schema.Meta.Name()).Put(schema.ScheduledCompactKeyName, mvcc.RevToBytes(mvcc.Revision{Main: scheduled}, mvcc.NewRevBytes()))
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	snap, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	fromSnap := etcdtest.Client(t, snap.ClientURL)
	if _, err := fromSnap.Get(ctx, "/registry/configmaps/a/x", clientv3.WithRev(scheduled-1)); !errors.Is(err, rpctypes.ErrCompacted) {
		t.Errorf("a revision before the scheduled compaction: %v, want etcd's compacted error", err)
	}
	resp, err := fromSnap.Get(ctx, "/registry/configmaps/a/x", clientv3.WithRev(scheduled))
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "3" {
		t.Errorf("the scheduled compaction's own revision: %+v, %v", resp, err)
	}
}

func TestBadSnapshotsAreRefused(t *testing.T) {
	e, err := embedded.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	live := etcdtest.Client(t, e.ClientURL)
	for i := range 2000 {
		if _, err := live.Put(context.Background(), fmt.Sprintf("/registry/k%04d", i), strings.Repeat("x", 200)); err != nil {
			t.Fatal(err)
		}
	}
	etcdtest.SaveSnapshot(t, live, good)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for name, tc := range map[string]struct{ path, want string }{
		"missing":   {filepath.Join(dir, "none.db"), "no such file or directory"},
		"directory": {dir, "it is a directory"},
		"not etcd":  {write("text.db", []byte(strings.Repeat("not a database\n", 1000))), "not an etcd snapshot"},
		"truncated": {write("cut.db", data[:len(data)/2]), "truncated"},
		"empty":     {write("empty.db", nil), "the file is empty, not an etcd snapshot"},
	} {
		s, err := Open(tc.path)
		if err == nil {
			s.Close()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", name, err, tc.want)
		}
	}
}

// replayed describes the events a watch sees up to revision until (a
// progress notification at it tells it has seen them all), or its
// compaction.
func replayed(t *testing.T, c *clientv3.Client, until int64, key string, opts ...clientv3.OpOption) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(clientv3.WithRequireLeader(context.Background()), 10*time.Second)
	defer cancel()
	var b strings.Builder
	ch := c.Watch(ctx, key, append(opts, clientv3.WithProgressNotify())...)
	if err := c.RequestProgress(ctx); err != nil {
		t.Fatal(err)
	}
	for resp := range ch {
		if resp.CompactRevision > 0 {
			fmt.Fprintf(&b, "compacted at %d\n", resp.CompactRevision)
			return b.String()
		}
		for _, ev := range resp.Events {
			fmt.Fprintf(&b, "%s %s=%q mod=%d create=%d version=%d", ev.Type, ev.Kv.Key, ev.Kv.Value, ev.Kv.ModRevision, ev.Kv.CreateRevision, ev.Kv.Version)
			if ev.PrevKv != nil {
				fmt.Fprintf(&b, " prev=%q@%d", ev.PrevKv.Value, ev.PrevKv.ModRevision)
			}
			b.WriteString("\n")
		}
		if resp.IsProgressNotify() && resp.Header.Revision >= until {
			return b.String()
		}
		if err := c.RequestProgress(ctx); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatalf("watch %q ended: %v", key, ctx.Err())
	return ""
}

// TestSmallSnapshotsRead reads snapshots small enough for bbolt to store the
// key bucket inline in its parent, where it copies the values out of the
// mapping when they are not aligned: whatever their place, each reads.
func TestSmallSnapshotsRead(t *testing.T) {
	ctx := context.Background()
	for n := 1; n <= 8; n++ {
		e, err := embedded.Start(nil)
		if err != nil {
			t.Fatal(err)
		}
		live := etcdtest.Client(t, e.ClientURL)
		for i := range n {
			if _, err := live.Put(ctx, fmt.Sprintf("/registry/k%d", i), strings.Repeat("v", 3*i+n)); err != nil {
				t.Fatal(err)
			}
		}
		path := filepath.Join(t.TempDir(), "small.db")
		etcdtest.SaveSnapshot(t, live, path)
		want := describe(live.Get(ctx, "/registry/", clientv3.WithPrefix()))
		e.Close()
		snap, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := describe(etcdtest.Client(t, snap.ClientURL).Get(ctx, "/registry/", clientv3.WithPrefix())); got != want {
			t.Errorf("%d keys: the snapshot reads\n%s\nthe live etcd\n%s", n, got, want)
		}
		snap.Close()
	}
}

// TestDamagedSnapshotsAreOneLine overwrites the head of each page of a
// snapshot in turn, 64 bytes of zeros, of ones and of noise, and the same
// past the page's header: each copy
// either reads as the whole one does or is refused with one line saying
// it is damaged, never a panic; and the file is left as it was.
func TestDamagedSnapshotsAreOneLine(t *testing.T) {
	e, err := embedded.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	live := etcdtest.Client(t, e.ClientURL)
	ctx := context.Background()
	for i := range 300 {
		if _, err := live.Put(ctx, fmt.Sprintf("/registry/pods/ns%d/pod%03d", i%7, i), strings.Repeat("v", 100+i)); err != nil {
			t.Fatal(err)
		}
	}
	lease, err := live.Grant(ctx, 3600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := live.Put(ctx, "/registry/events/ns0/e1", "event", clientv3.WithLease(lease.ID)); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole.db")
	etcdtest.SaveSnapshot(t, live, whole)
	e.Close()
	data, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(whole, 0o400, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	pageSize := db.Info().PageSize
	db.Close()

	read := func(path string) (string, error) {
		snap, err := Open(path)
		if err != nil {
			return "", err
		}
		defer snap.Close()
		c := etcdtest.Client(t, snap.ClientURL)
		got := describe(c.Get(ctx, "\x00", clientv3.WithFromKey()))
		ttl, err := c.TimeToLive(ctx, lease.ID)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%slease granted %d\n", got, ttl.GrantedTTL), nil
	}
	want, err := read(whole)
	if err != nil || !strings.Contains(want, "count=301") {
		t.Fatalf("the whole snapshot reads %v:\n%s", err, want)
	}
	noise := make([]byte, 64)
	for i := range noise {
		noise[i] = byte(i*151 + 89)
	}
	pages := len(data) / pageSize
	var refused, intact int
	// The head of a page is its header (which says which page it is) and
	// its first elements; past the header, the elements alone.
	for name, head := range map[string][]byte{
		"zeros": make([]byte, 64), "ones": bytes.Repeat([]byte{0xff}, 64), "noise": noise,
		"elements, zeros": make([]byte, 64), "elements, ones": bytes.Repeat([]byte{0xff}, 64), "elements, noise": noise,
	} {
		for page := range pages {
			damaged := bytes.Clone(data)
			at := page * pageSize
			if strings.HasPrefix(name, "elements") {
				at += 16
			}
			copy(damaged[at:], head)
			path := filepath.Join(dir, fmt.Sprintf("%s-%d.db", name, page))
			if err := os.WriteFile(path, damaged, 0o400); err != nil {
				t.Fatal(err)
			}
			got, err := read(path)
			switch {
			case err != nil:
				refused++
				if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "damaged") && !strings.Contains(msg, "not an etcd snapshot") {
					t.Errorf("page %d overwritten with %s: %q, want one line saying the snapshot is damaged", page, name, msg)
				}
			case got != want:
				t.Errorf("page %d overwritten with %s reads\n%s\nthe whole snapshot\n%s", page, name, got, want)
			default:
				intact++
			}
			if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, damaged) {
				t.Fatalf("page %d overwritten with %s: reading it changed the file (%v)", page, name, err)
			}
			os.Remove(path)
		}
	}
	t.Logf("%d pages, 6 ways each: %d copies refused, %d read whole", pages, refused, intact)
}

// TestASnapshotsIndexIsCompact: the index of a snapshot holds, for a key
// of one revision, its name and 72 bytes, whatever the keys; that of a key
// written three times, its name thrice and 184 bytes. So a million pods
// index in about 120 MiB.
func TestASnapshotsIndexIsCompact(t *testing.T) {
	e, err := embedded.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	live := etcdtest.Client(t, e.ClientURL)
	ctx := context.Background()
	var names int64
	for i := range 3000 {
		key := fmt.Sprintf("/registry/pods/ns-%02d/pod-%05d", i%7, i)
		names += int64(len(key))
		if _, err := live.Put(ctx, key, strings.Repeat("v", 100)); err != nil {
			t.Fatal(err)
		}
	}
	const rewritten = "/registry/configmaps/default/three-times"
	for range 3 {
		if _, err := live.Put(ctx, rewritten, "v"); err != nil {
			t.Fatal(err)
		}
	}
	names += 3 * int64(len(rewritten))
	path := filepath.Join(t.TempDir(), "index.db")
	etcdtest.SaveSnapshot(t, live, path)
	snap, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	idx, err := snap.indexed()
	if err != nil {
		t.Fatal(err)
	}
	if len(idx.keys) != 3001 || len(idx.revs) != 3003 {
		t.Fatalf("indexed %d keys and %d revisions, want 3001 and 3003", len(idx.keys), len(idx.revs))
	}
	// Each array is made once at its size, not grown by copies.
	if cap(idx.revs) != len(idx.revs) || cap(idx.keys) != len(idx.keys) || cap(idx.names) != len(idx.names) {
		t.Errorf("capacities of revisions %d/%d, keys %d/%d, names %d/%d: want each array made at its size", len(idx.revs), cap(idx.revs), len(idx.keys), cap(idx.keys), len(idx.names), cap(idx.names))
	}
	want := names + 3001*16 + 3003*56 + int64(len(idx.copies))
	if got := idx.bytes(); got > want {
		t.Errorf("the index holds %d bytes, want at most %d", got, want)
	}
}
