//go:build ha

// The tests of a highly available etcd run on three real members started
// in the test process, one of which each kills as etcd's own robustness
// tests kill members. They run apart, to keep `go test ./...` within its
// three minutes: .ci/run runs them (go test -tags ha -run '^TestHA'
// ./cmd/regctl), in about 15 s.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/migrate"
)

// haCluster is an etcd of three members, each in this process.
type haCluster struct {
	members []*embed.Etcd
	// closed closes each member once: embed's Close is not idempotent.
	closed []sync.Once
	urls   []string
	client *clientv3.Client
}

func newHACluster(t *testing.T) *haCluster {
	t.Helper()
	members, urls := startEtcdCluster(t, 3)
	c := &haCluster{members: members, closed: make([]sync.Once, len(members)), urls: urls}
	for i, e := range members {
		t.Cleanup(func() { c.closed[i].Do(e.Close) })
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: c.urls, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	c.client = client
	return c
}

func (c *haCluster) flag() string { return "--etcd-servers=" + strings.Join(c.urls, ",") }

// killLeader stops the leader at once, with no leadership transfer, as a
// member whose process dies stops; the others elect another.
func (c *haCluster) killLeader(t *testing.T) {
	t.Helper()
	for i, e := range c.members {
		if e.Server.Leader() == e.Server.MemberID() {
			c.kill(i)
			return
		}
	}
	t.Fatal("no member is the leader")
}

// killFollower stops a member that is not the leader.
func (c *haCluster) killFollower(t *testing.T) {
	t.Helper()
	for i, e := range c.members {
		if e.Server.Leader() != e.Server.MemberID() {
			c.kill(i)
			return
		}
	}
	t.Fatal("no member is a follower")
}

// kill stops member i with no leadership transfer, then closes its
// listeners, as its process dying would.
func (c *haCluster) kill(i int) {
	e := c.members[i]
	e.Server.HardStop()
	c.closed[i].Do(e.Close)
}

// keys are the keys under prefix, with each key's create and mod
// revisions, read from the members that run.
func (c *haCluster) keys(t *testing.T, prefix string) map[string][2]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := c.client.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][2]int64{}
	for _, kv := range resp.Kvs {
		out[string(kv.Key)] = [2]int64{kv.CreateRevision, kv.ModRevision}
	}
	return out
}

// onLine runs do, once, when the command it is the output of has printed
// n lines holding marker: a member dies while the command writes.
type onLine struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	n      int
	do     func()
	done   bool
}

func (w *onLine) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.done && strings.Count(w.buf.String(), w.marker) >= w.n {
		w.done = true
		w.do()
	}
	return len(p), nil
}

func (w *onLine) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// runKilling runs regctl with args, and do once its stdout has n lines
// holding marker.
func runKilling(marker string, n int, do func(), args ...string) (stdout, stderr string, code int) {
	out := &onLine{marker: marker, n: n, do: do}
	var errOut bytes.Buffer
	code = Run(context.Background(), cli.IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: &errOut}, args)
	return out.String(), errOut.String(), code
}

var notCreated = regexp.MustCompile(`error: (\d+) of (\d+) objects were not created`)

// TestHACreateWhileTheLeaderDies creates 3,000 config maps on three
// members given to regctl and kills the leader while it writes: every
// object said created is in etcd, every one in etcd was said created,
// each written once, what was not written is named and counted (a write
// whose answer was lost with the leader is read back, not guessed), the
// exit code says so, and a second run creates the rest.
func TestHACreateWhileTheLeaderDies(t *testing.T) {
	t.Parallel()
	c := newHACluster(t)
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace), c.flag())
	const n = 3000
	var m strings.Builder
	for i := range n {
		fmt.Fprintf(&m, "%s---\n", configMapDoc(fmt.Sprintf("cm-%04d", i)))
	}
	manifest := manifestFile(t, m.String())
	stdout, stderr, code := c.runKillingLeader(t, 500, "create", "-f", manifest, c.flag())
	if strings.Contains(stderr, "may have been written") {
		t.Errorf("writes left uncertain:\n%s", stderr)
	}
	stored := c.keys(t, "/registry/configmaps/shop/")
	created := 0
	for i := range n {
		name := fmt.Sprintf("cm-%04d", i)
		revs, inEtcd := stored["/registry/configmaps/shop/"+name]
		said := strings.Contains(stdout, "configmap/"+name+" created\n")
		named := strings.Contains(stderr, "(configmap/"+name+")")
		switch {
		case said && !inEtcd:
			t.Errorf("%s said created, not in etcd", name)
		case inEtcd && !said:
			t.Errorf("%s in etcd, not said created", name)
		case !inEtcd && !said && !named:
			t.Errorf("%s neither created nor named as not created", name)
		case inEtcd && revs[0] != revs[1]:
			t.Errorf("%s written more than once (revisions %v)", name, revs)
		}
		if said {
			created++
		}
	}
	switch sum := notCreated.FindStringSubmatch(stderr); {
	case created == n && code != 0:
		t.Errorf("every object created, yet exit %d: %s", code, stderr)
	case created < n && (code == 0 || sum == nil || sum[1] != strconv.Itoa(n-created)):
		t.Errorf("%d of %d created: exit %d, stderr %q: want the %d not created counted", created, n, code, stderr, n-created)
	}
	t.Logf("%d of %d created while the leader died\n%s", created, n, stderr)

	// A second run creates the rest; those there already exist.
	_, stderr, _ = run(t, "create", "-f", manifest, c.flag())
	if got := len(c.keys(t, "/registry/configmaps/shop/")); got != n {
		t.Errorf("after a second run, %d config maps: want %d\n%s", got, n, stderr)
	}
	if already := strings.Count(stderr, "already exists"); already != created {
		t.Errorf("the second run found %d already there, the first created %d", already, created)
	}
}

// TestHAMigrateWhileTheLeaderDies rotates 2,000 secrets into encryption
// and kills the leader while it rewrites: the report's figures are what
// etcd holds, and the run finishes the job; a second finds nothing to do.
func TestHAMigrateWhileTheLeaderDies(t *testing.T) {
	t.Parallel()
	c := newHACluster(t)
	const n = 2000
	var m strings.Builder
	m.WriteString(shopNamespace)
	for i := range n {
		fmt.Fprintf(&m, "---\napiVersion: v1\nkind: Secret\nmetadata: {name: s-%04d, namespace: shop}\nstringData: {k: v}\n", i)
	}
	mustRun(t, "create", "-f", manifestFile(t, m.String()), c.flag())
	enc := encryptionFlag(t, "enc.yaml", map[string]string{"secrets": aescbc("key1") + identityProvider})

	stdout, stderr, code := c.runKillingLeader(t, 500, "migrate", "secrets", "--encryption", "-o", "json", c.flag(), enc)
	encrypted := c.encrypted(t, "/registry/secrets/shop/")
	t.Logf("exit %d, %d of %d encrypted while the leader died\n%s", code, encrypted, n, stderr)
	report := &migrate.Report{}
	if err := json.Unmarshal([]byte(stdout), report); err != nil {
		t.Fatalf("the migration's report: %v: %s", err, stdout)
	}
	// The report's figures are etcd's: what it says rewritten (or found
	// rewritten) is encrypted, what it says not rewritten is not. A
	// rewrite whose answer was lost is read back and done again when it
	// was lost (its resourceVersion the precondition): the run finishes.
	res := resourceReport(report, "secrets")
	if done := res.Rewritten + res.Current; done != int64(encrypted) || res.Failed != int64(n-encrypted) || code != 0 || encrypted != n {
		t.Errorf("exit %d, report %+v: %d of %d encrypted in etcd; want every one rewritten", code, res, encrypted, n)
	}
	_, stderr, code = run(t, "migrate", "secrets", "--encryption", c.flag(), enc)
	if got := c.encrypted(t, "/registry/secrets/shop/"); code != 0 || got != n {
		t.Errorf("a second run: exit %d, %d of %d encrypted: %s", code, got, n, stderr)
	}
}

// encrypted counts the values under prefix written encrypted.
func (c *haCluster) encrypted(t *testing.T, prefix string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := c.client.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, kv := range resp.Kvs {
		if bytes.HasPrefix(kv.Value, []byte("k8s:enc:")) {
			n++
		}
	}
	return n
}

// runKillingLeader runs regctl with args and kills the leader once etcd
// has committed n writes of it: while its writers have writes in flight.
func (c *haCluster) runKillingLeader(t *testing.T, n int, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watch := c.client.Watch(ctx, "/registry/", clientv3.WithPrefix())
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		seen := 0
		for resp := range watch {
			if seen += len(resp.Events); seen >= n {
				c.killLeader(t)
				return
			}
		}
	}()
	stdout, stderr, code = run(t, args...)
	cancel()
	<-killed
	return stdout, stderr, code
}

// TestHARestoreWhileTheLeaderDies restores 2,000 config maps from an
// earlier revision and kills the leader while it writes: every object said
// restored is in etcd, and a second run restores the rest.
func TestHARestoreWhileTheLeaderDies(t *testing.T) {
	t.Parallel()
	c := newHACluster(t)
	const n = 2000
	var m strings.Builder
	m.WriteString(shopNamespace)
	for i := range n {
		fmt.Fprintf(&m, "---\n%s", configMapDoc(fmt.Sprintf("cm-%04d", i)))
	}
	mustRun(t, "create", "-f", manifestFile(t, m.String()), c.flag())
	resp, err := c.client.Get(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	rev := strconv.FormatInt(resp.Header.Revision, 10)
	if _, err := c.client.Delete(context.Background(), "/registry/configmaps/shop/", clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := c.runKillingLeader(t, 500, "restore", "--from", "rev:"+rev, "configmaps", "-n", "shop", c.flag())
	stored := c.keys(t, "/registry/configmaps/shop/")
	restored := strings.Count(stdout, " restored\n")
	for i := range n {
		name := fmt.Sprintf("cm-%04d", i)
		_, inEtcd := stored["/registry/configmaps/shop/"+name]
		if said := strings.Contains(stdout, "configmap/"+name+" restored\n"); said != inEtcd {
			t.Errorf("%s: said restored %v, in etcd %v", name, said, inEtcd)
		}
	}
	t.Logf("exit %d, %d of %d restored while the leader died\n%s", code, restored, n, stderr)
	if (restored == n) != (code == 0) {
		t.Errorf("%d of %d restored, exit %d: %s", restored, n, code, stderr)
	}
	if _, stderr, code := run(t, "restore", "--from", "rev:"+rev, "configmaps", "-n", "shop", c.flag()); code != 0 || len(c.keys(t, "/registry/configmaps/shop/")) != n {
		t.Errorf("a second run: exit %d, %d of %d restored: %s", code, len(c.keys(t, "/registry/configmaps/shop/")), n, stderr)
	}
}

// TestHAListWhileAMemberDies lists 5,000 config maps and kills a member
// while the list is read: the list is whole, or the command fails; never
// short with exit 0.
func TestHAListWhileAMemberDies(t *testing.T) {
	t.Parallel()
	for _, kill := range []string{"leader", "follower"} {
		t.Run(kill, func(t *testing.T) {
			c := newHACluster(t)
			ctx := context.Background()
			const n = 5000
			for i := range n {
				value := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%04d","namespace":"shop","uid":"u%d","creationTimestamp":"2026-01-01T00:00:00Z"}}`, i, i)
				if _, err := c.client.Put(ctx, fmt.Sprintf("/registry/configmaps/shop/cm-%04d", i), value); err != nil {
					t.Fatal(err)
				}
			}
			do := func() { c.killFollower(t) }
			if kill == "leader" {
				do = func() { c.killLeader(t) }
			}
			stdout, stderr, code := runKilling("\n", 1000, do, "get", "configmaps", "-n", "shop", "-o", "name", "--chunk-size", "50", c.flag())
			if got := strings.Count(stdout, "\n"); code == 0 && got != n {
				t.Errorf("exit 0 with %d of %d listed: %s", got, n, stderr)
			}
		})
	}
}

// lastLines are the last n lines of out.
func lastLines(out string, n int) string {
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n") + "\n"
}
