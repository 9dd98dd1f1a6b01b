package snapshot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/etcdview/etcdtest"
)

// TestSnapshotStatusIsTheFiles: a snapshot's figures are the file's size,
// its pages, and of them those in use as bbolt counts them for etcd's
// backend, and the revision and compaction of the etcd it was saved from.
func TestSnapshotStatusIsTheFiles(t *testing.T) {
	_, c := etcdtest.Start(t)
	ctx := context.Background()
	// Values written, then compacted away: pages that held them are free.
	for i := range 200 {
		if _, err := c.Put(ctx, fmt.Sprintf("/registry/configmaps/a/%d", i%20), strings.Repeat("x", 2000)); err != nil {
			t.Fatal(err)
		}
	}
	current, err := etcdview.Revision(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compact(ctx, current, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "snapshot.db")
	etcdtest.SaveSnapshot(t, c, path)
	snap, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	got, err := snap.Status()
	if err != nil {
		t.Fatal(err)
	}

	// bbolt's own count of the free pages, as etcd's backend takes it.
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, PreLoadFreelist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var size, inUse int64
	if err := db.View(func(tx *bolt.Tx) error {
		size = tx.Size()
		inUse = size - int64(db.Stats().FreePageN)*int64(db.Info().PageSize)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	want := Status{Path: path, FileSize: info.Size(), DBSize: size, DBSizeInUse: inUse, Revision: current, Compacted: current}
	if got != want {
		t.Errorf("status %+v, want %+v", got, want)
	}
	if inUse >= size {
		t.Errorf("the snapshot holds no free pages (%d of %d bytes in use): the test does not test them", inUse, size)
	}
}
