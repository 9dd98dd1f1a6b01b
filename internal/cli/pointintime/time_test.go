package pointintime

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/apis/coordination"

	"github.com/regctl/regctl/internal/clock"
	"github.com/regctl/regctl/internal/etcdview/embedded"
	"github.com/regctl/regctl/internal/logs/logstest"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
	"github.com/regctl/regctl/internal/target"
)

func TestMain(m *testing.M) { logstest.Main(m) }

// withClocks is an etcd holding a config map written between two renewals
// of a Lease, an hour and a minute ago, and the config of a command on it
// that keeps its notes. It returns the revisions of the renewals and of
// the config map.
func withClocks(t *testing.T, notes *[]string) (cfg storagemap.Config, c *clientv3.Client, first, written, second int64) {
	t.Helper()
	ctx := context.Background()
	e, err := embedded.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	opts := serverflags.NewOptions()
	opts.Server.Etcd.StorageConfig.Transport.ServerList = []string{e.ClientURL}
	cfg = storagemap.Config{Options: opts, Timeout: 10 * time.Second, Note: func(s string) { *notes = append(*notes, s) }}
	leasesOnly := cfg
	leasesOnly.Only = clock.LeasesPath
	s, err := storagemap.OpenData(ctx, leasesOnly)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := s.Map.Handles[clock.LeasesPath]
	// A client of the test's own: the session's closes with it.
	if c, err = clientv3.New(clientv3.Config{Endpoints: []string{e.ClientURL}, DialTimeout: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	put := func(key, value string) int64 {
		t.Helper()
		resp, err := c.Put(ctx, key, value)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Header.Revision
	}
	renew := func(ago time.Duration) int64 {
		t.Helper()
		holder := "apiserver-1"
		data, err := runtime.Encode(h.StorageCodec(), &coordination.Lease{ObjectMeta: metav1.ObjectMeta{Name: holder, Namespace: "kube-system"},
			Spec: coordination.LeaseSpec{HolderIdentity: &holder, RenewTime: &metav1.MicroTime{Time: time.Now().Add(-ago)}}})
		if err != nil {
			t.Fatal(err)
		}
		return put("/registry/leases/kube-system/"+holder, string(data))
	}
	first = renew(time.Hour)
	written = put("/registry/configmaps/shop/app", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app","namespace":"shop"}}`)
	second = renew(time.Minute)
	return cfg, c, first, written, second
}

// TestASideAtATime opens rev:TIME as the side at the revision the Leases'
// clocks tell for the time, its custom resources through the CRDs then,
// and says which revision on stderr; the side is told once, however often
// it is opened. A time no clock can tell opens nothing.
func TestASideAtATime(t *testing.T) {
	ctx := context.Background()
	var notes []string
	cfg, _, first, written, second := withClocks(t, &notes)
	sides := New(cfg, []string{"configmaps"}, target.Scope{Namespace: "shop"})
	defer sides.Close()

	side, targets, err := sides.Open(ctx, "rev:30m")
	if err != nil {
		t.Fatal(err)
	}
	if side.Name != "rev:30m" || side.Revision != first || side.Now || len(targets) != 1 || targets[0].Path != "configmaps" {
		t.Errorf("rev:30m: side %+v, %d targets; want revision %d (before the config map at %d)", side, len(targets), first, written)
	}
	want := fmt.Sprintf(") is revision %d (Lease kube-system/apiserver-1 renewed at ", first)
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "30m ago (") || !strings.Contains(notes[0], want) || !strings.Contains(notes[0], fmt.Sprintf("the next clock, revision %d", second)) {
		t.Errorf("notes %q, want one naming revision %d and the next clock, %d", notes, first, second)
	}
	if again, _, err := sides.Open(ctx, "rev:30m"); err != nil || again.Revision != first || len(notes) != 1 {
		t.Errorf("opened again: %+v, %v, %d notes; want the same revision, told once", again, err, len(notes))
	}
	if _, _, err := sides.Open(ctx, "rev:2h"); err == nil || !strings.Contains(err.Error(), "is before the first revision etcd can tell the time of") {
		t.Errorf("rev:2h: %v", err)
	}
}

// TestTellTimeOnASnapshot tells a time by the clocks a snapshot holds.
func TestTellTimeOnASnapshot(t *testing.T) {
	ctx := context.Background()
	var notes []string
	cfg, c, _, _, second := withClocks(t, &notes)
	snapshot, err := c.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer snapshot.Close()
	path := filepath.Join(t.TempDir(), "backup.db")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, snapshot); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cfg.Options = serverflags.NewOptions()
	cfg.Snapshot = path
	rev, err := TellTime(ctx, cfg, parse(t, "10s"), storagemap.OpenData)
	if err != nil || rev != second || len(notes) != 1 {
		t.Errorf("10s ago on the snapshot: revision %d (%v), notes %q; want %d", rev, err, notes, second)
	}
}

func parse(t *testing.T, s string) clock.Time {
	t.Helper()
	_, at, err := clock.ParseRevision(s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}
