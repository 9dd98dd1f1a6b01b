package embedded

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coreos/go-semver/semver"
	bolt "go.etcd.io/bbolt"
	etcdversion "go.etcd.io/etcd/api/v3/version"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/storage/schema"
)

func clientOf(t *testing.T, e *Etcd) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{e.ClientURL}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestStartOnKeepsData(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sandbox")
	// A missing directory is made only when asked: a read of a mistyped
	// path is no new, empty sandbox.
	if _, err := StartOn(dir, time.Second, nil, false); err == nil || !strings.Contains(err.Error(), "the data directory "+dir+" does not exist") {
		t.Errorf("a missing directory, not to be made: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the directory was made: %v", err)
	}
	e, err := StartOn(dir, time.Second, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if !e.Created {
		t.Error("a new sandbox is not said to be made")
	}
	ctx := context.Background()
	if _, err := clientOf(t, e).Put(ctx, "/registry/kept", "v"); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = StartOn(dir, time.Second, nil, false)
	if err != nil {
		t.Fatalf("reopening: %v", err)
	}
	defer e.Close()
	if e.Created {
		t.Error("a sandbox reopened is said to be made")
	}
	resp, err := clientOf(t, e).Get(ctx, "/registry/kept")
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v" {
		t.Fatalf("reopened sandbox: %v, %v: want the key written before", resp, err)
	}
}

func TestStartOnWaitsForTheDirectory(t *testing.T) {
	dir := t.TempDir()
	e, err := StartOn(dir, time.Second, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = StartOn(dir, 300*time.Millisecond, nil, true)
	if err == nil || !strings.Contains(err.Error(), "in use by another regctl") {
		t.Fatalf("second start: %v, want the directory in use", err)
	}
	if waited := time.Since(start); waited < 300*time.Millisecond || waited > 3*time.Second {
		t.Errorf("waited %s, want about 300ms", waited)
	}
	released := make(chan error, 1)
	go func() {
		e2, err := StartOn(dir, 10*time.Second, nil, true)
		if err == nil {
			e2.Close()
		}
		released <- err
	}()
	time.Sleep(200 * time.Millisecond)
	e.Close()
	if err := <-released; err != nil {
		t.Fatalf("start waiting for the directory: %v, want it once released", err)
	}
}

func TestStartOnRefuses(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	other := filepath.Join(tmp, "other")
	os.WriteFile(file, nil, 0o600)
	os.Mkdir(other, 0o700)
	os.WriteFile(filepath.Join(other, "notes.txt"), []byte("x"), 0o600)
	garbage := filepath.Join(tmp, "garbage")
	os.MkdirAll(filepath.Join(garbage, "member", "snap"), 0o700)
	os.WriteFile(filepath.Join(garbage, "member", "snap", "db"), []byte(strings.Repeat("not bolt ", 2000)), 0o600)
	for _, tc := range []struct{ dir, want string }{
		{file, "is a file, not a directory"},
		{other, "holds files but no etcd data"},
		{filepath.Join(file, "sub"), "not a directory"},
		{garbage, "is not an etcd database"},
	} {
		_, err := StartOn(tc.dir, time.Second, nil, true)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.dir, err, tc.want)
		}
	}
	entries, _ := os.ReadDir(tmp)
	if len(entries) != 3 {
		t.Errorf("the temp dir holds %d entries, want the 3 made here", len(entries))
	}
	if entries, _ := os.ReadDir(other); len(entries) != 1 {
		t.Errorf("%s holds %d entries, want its one file", other, len(entries))
	}
}

// TestStartOnCopiedDataDir opens the data directory of another cluster's
// member, with its own name and peer URL and a second member that is not
// here: a copy of a member's /var/lib/etcd. Without forcing a new cluster
// the lone member would wait for a quorum for ever.
func TestStartOnCopiedDataDir(t *testing.T) {
	dir := t.TempDir()
	ports, err := freeLoopbackPorts(2)
	if err != nil {
		t.Fatal(err)
	}
	clientURL := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))}
	peerURL := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))}
	cfg := embed.NewConfig()
	cfg.Name = "control-plane-1"
	cfg.Dir = dir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{clientURL}, []url.URL{clientURL}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peerURL}, []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.InitialClusterToken = "a-real-cluster"
	cfg.LogLevel = "error"
	other, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-other.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		t.Fatal("the other etcd did not start")
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{clientURL.String()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Put(ctx, "/registry/namespaces/copied", "from another cluster"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.MemberAdd(ctx, []string{"http://192.0.2.1:2380"}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	other.Close()

	e, err := StartOn(dir, time.Second, nil, true)
	if err != nil {
		t.Fatalf("opening the copied data dir: %v", err)
	}
	defer e.Close()
	resp, err := clientOf(t, e).Get(ctx, "/registry/namespaces/copied")
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "from another cluster" {
		t.Fatalf("reading the copied data: %v, %v", resp, err)
	}
	if _, err := clientOf(t, e).Put(ctx, "/registry/namespaces/new", "x"); err != nil {
		t.Fatalf("writing in the copied data dir: %v", err)
	}
}

// TestStartOnRefusesARunningEtcd names a member's own data directory while
// its etcd runs: etcd here would wait for the database's lock for ever.
func TestStartOnRefusesARunningEtcd(t *testing.T) {
	dir := t.TempDir()
	cfg, err := newConfig(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	running, err := start(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer running.etcd.Close()
	done := make(chan error, 1)
	go func() {
		e, err := StartOn(dir, time.Second, nil, true)
		if err == nil {
			e.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "an etcd server running on it") {
			t.Errorf("%v: want the directory in use by an etcd", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("StartOn waits for the running etcd's database")
	}
}

func TestStartOnRefusesAnUnwritableDir(t *testing.T) {
	if os.Geteuid() == 0 {
		// Root writes in any directory: the test runs again as nobody.
		asNobody(t)
		return
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	if _, err := StartOn(dir, time.Second, nil, true); err == nil || !strings.Contains(err.Error(), "is not writable") {
		t.Errorf("%v: want the directory not writable", err)
	}
	if _, err := StartOn(filepath.Join(dir, "sub"), time.Second, nil, true); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("%v: want the directory not creatable", err)
	}
}

// TestStartOnRefusesANewerEtcdsData: a data directory a newer etcd wrote
// (a member of a newer Kubernetes release) is refused in one line that
// names both etcds and what to use, and is left as it was.
func TestStartOnRefusesANewerEtcdsData(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "member-copy")
	e, err := StartOn(dir, time.Second, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	own := semver.Must(semver.NewVersion(etcdversion.Version))
	newer := fmt.Sprintf("%d.%d.0", own.Major, own.Minor+1)
	path := filepath.Join(dir, "member", "snap", "db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(schema.Meta.Name()).Put(schema.MetaStorageVersionName, []byte(newer))
	})
	if cerr := db.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	_, err = StartOn(dir, time.Second, nil, true)
	want := fmt.Sprintf("the data directory %s was written by etcd %d.%d, and this regctl carries etcd %s, which cannot open it: use the regctl of the cluster's Kubernetes release", dir, own.Major, own.Minor+1, etcdversion.Version)
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("StartOn on a newer etcd's data: %v; want %q", err, want)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Error("the database was changed")
	}
}

// asNobody runs the test named in a child process of the test binary as
// the user nobody, and fails when it fails. The binary and the child's
// temporary directory are copied where nobody may read and write.
func asNobody(t *testing.T) {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(root, "test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(root, "tmp")
	if err := os.Mkdir(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, 0o1777); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	const nobody = 65534
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("as nobody, the test did not run:\n%s", out)
	}
}
