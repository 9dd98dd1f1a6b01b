// Package etcdtest reads the real etcds of regctl's tests as etcdctl
// would: a plain client, and a snapshot saved as `etcdctl snapshot save`
// saves it.
package etcdtest

import (
	"context"
	"io"
	"os"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/regctl/regctl/internal/etcdview/embedded"
)

// Client is a plain etcd client on url, closed when the test ends.
func Client(t testing.TB, url string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// SaveSnapshot writes what `etcdctl snapshot save` writes: the etcd
// client's Snapshot stream.
func SaveSnapshot(t testing.TB, c *clientv3.Client, path string) {
	t.Helper()
	r, err := c.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, r); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// Start starts an ephemeral etcd for the test, with opts, closed when it
// ends, and returns it with a plain client on it.
func Start(t testing.TB, opts ...embedded.Option) (*embedded.Etcd, *clientv3.Client) {
	t.Helper()
	e, err := embedded.Start(nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, Client(t, e.ClientURL)
}
