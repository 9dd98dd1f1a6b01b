package etcdtest

import (
	"context"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/regctl/regctl/internal/etcdview/embedded"
)

// A snapshot saved is a bbolt database of the etcd's keys, as etcdctl's.
func TestASavedSnapshotIsTheEtcdsDatabase(t *testing.T) {
	e, err := embedded.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	c := Client(t, e.ClientURL)
	if _, err := c.Put(context.Background(), "/registry/configmaps/a/b", "v"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "snapshot.db")
	SaveSnapshot(t, c, path)
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("the snapshot is no bbolt database: %v", err)
	}
	defer db.Close()
	var keys int
	if err := db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("key"))
		if b == nil {
			t.Fatal("the snapshot has no key bucket")
		}
		keys = b.Stats().KeyN
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if keys != 1 {
		t.Errorf("the snapshot holds %d revisions of keys, want the one put", keys)
	}
}
