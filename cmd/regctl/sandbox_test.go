package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// The tests in this file run regctl's sandbox, --data-dir, as a user does:
// one process per command, each opening the data directory the previous
// one left.

// runIn runs the regctl binary in dir and returns its output and exit code.
func runIn(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(regctlBinary(t), args...)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// mustRunIn is runIn that fails the test unless regctl exits 0.
func mustRunIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	stdout, stderr, code := runIn(t, dir, args...)
	if code != 0 {
		t.Fatalf("regctl %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	return stdout
}

// examplesDir is the repository's examples directory.
func examplesDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// createExamples creates the repository's examples in the sandbox dir, in
// the order they depend on each other, one process each.
func createExamples(t *testing.T, dir string) {
	t.Helper()
	for _, name := range []string{"namespace", "deployment", "service", "secret", "crd", "widget"} {
		mustRunIn(t, t.TempDir(), "--data-dir", dir, "create", "-f", filepath.Join(examplesDir(t), name+".yaml"))
	}
}

func TestSandboxKeepsDataAcrossProcesses(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sandbox")
	// The first write makes the sandbox, and says so; the next ones
	// open it.
	if _, stderr, code := runIn(t, t.TempDir(), "--data-dir", dir, "delete", "configmaps/none", "-n", "shop", "--ignore-not-found"); code != 0 || !strings.Contains(stderr, "note: made a new sandbox in "+dir+", which did not exist\n") {
		t.Errorf("the first write: exit %d, stderr %q: want a note of the new sandbox", code, stderr)
	}
	createExamples(t, dir)
	if _, stderr, _ := runIn(t, t.TempDir(), "--data-dir", dir, "delete", "configmaps/none", "-n", "shop", "--ignore-not-found"); strings.Contains(stderr, "new sandbox") {
		t.Errorf("a sandbox that exists is said to be new: %q", stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "member", "wal")); err != nil {
		t.Fatalf("the sandbox holds no etcd data: %v", err)
	}
	wd := t.TempDir()
	out := mustRunIn(t, wd, "--data-dir", dir, "get", "deployments,services,secrets", "-n", "shop", "-o", "name")
	for _, want := range []string{"deployment.apps/web", "service/web", "secret/db-password"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("get: %q lacks %s", out, want)
		}
	}
	widget := mustRunIn(t, wd, "--data-dir", dir, "get", "widgets/blue", "-n", "shop", "-o", "jsonpath={.spec.color}")
	if widget != "blue" {
		t.Errorf("the custom resource's color: %q, want blue", widget)
	}
	crd := mustRunIn(t, wd, "--data-dir", dir, "get", "crd/widgets.example.com", "-o", `jsonpath={.status.conditions[?(@.type=="Established")].reason}`)
	if crd != "InitialNamesAccepted" {
		t.Errorf("the CRD's Established reason: %q, want the establishing controller's", crd)
	}
	if key := mustRunIn(t, wd, "--data-dir", dir, "keys", "secrets/db-password", "-n", "shop", "--check"); !regexp.MustCompile(`/registry/secrets/shop/db-password +true`).MatchString(key) {
		t.Errorf("keys: %q, want the key, there", key)
	}
	inspect := mustRunIn(t, wd, "--data-dir", dir, "inspect", "secrets/db-password", "-n", "shop")
	if !strings.Contains(inspect, "/registry/secrets/shop/db-password") || !strings.Contains(inspect, "identity") {
		t.Errorf("inspect: %q", inspect)
	}

	// A replace and a delete are seen by the next process too.
	manifest := mustRunIn(t, wd, "--data-dir", dir, "get", "widgets/blue", "-n", "shop", "-o", "yaml")
	edited := filepath.Join(wd, "widget.yaml")
	if err := os.WriteFile(edited, []byte(strings.Replace(manifest, "color: blue", "color: green", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRunIn(t, wd, "--data-dir", dir, "replace", "-f", edited)
	mustRunIn(t, wd, "--data-dir", dir, "delete", "secrets/db-password", "-n", "shop")
	if got := mustRunIn(t, wd, "--data-dir", dir, "get", "widgets/blue", "-n", "shop", "-o", "jsonpath={.spec.color}"); got != "green" {
		t.Errorf("after replace: color %q, want green", got)
	}
	if _, stderr, code := runIn(t, wd, "--data-dir", dir, "get", "secrets/db-password", "-n", "shop"); code == 0 || !strings.Contains(stderr, "not found") {
		t.Errorf("after delete: exit %d, %q: want not found", code, stderr)
	}
}

// TestReadmeQuickStart runs the regctl lines of the README's quick start
// as they are written, from a directory holding the examples, as a reader
// of a clone would.
func TestReadmeQuickStart(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## Quick start")
	if !ok {
		t.Fatal("the README has no quick start")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, _ := strings.Cut(section, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	examples, err := parseExamples(block)
	if err != nil {
		t.Fatal(err)
	}
	if len(examples) < 5 {
		t.Fatalf("the quick start has %d regctl lines", len(examples))
	}
	wd := t.TempDir()
	if err := os.Symlink(examplesDir(t), filepath.Join(wd, "examples")); err != nil {
		t.Fatal(err)
	}
	for _, ex := range examples {
		if !slices.Contains(ex.args, "--data-dir") {
			t.Errorf("%q: the quick start runs on the sandbox", ex.line)
		}
		if _, stderr, code := runIn(t, wd, ex.args...); code != 0 {
			t.Errorf("%q: exit %d: %s", ex.line, code, stderr)
		}
	}
}

func TestSandboxHeldByOneRegctlAtATime(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sandbox")
	mustRunIn(t, t.TempDir(), "--data-dir", dir, "create", "-f", filepath.Join(examplesDir(t), "namespace.yaml"))
	bin := regctlBinary(t)
	watcher, stdout, _ := startBinary(t, bin, "--data-dir", dir, "get", "namespaces", "-w")
	t.Cleanup(func() { watcher.Process.Kill(); watcher.Wait() })
	// The watch holds the sandbox once it has printed the list.
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || !strings.HasPrefix(line, "NAME") {
		t.Fatalf("the watch printed %q, %v", line, err)
	}

	start := time.Now()
	_, stderr, code := runIn(t, t.TempDir(), "--data-dir", dir, "--request-timeout=1s", "get", "namespaces")
	if code == 0 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, dir+" is in use by another regctl") {
		t.Errorf("a second regctl: exit %d, stderr %q: want one line saying the sandbox is in use", code, stderr)
	}
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("the second regctl gave up after %s, want it to wait --request-timeout", waited)
	}

	// One waiting long enough gets the sandbox once the watch ends.
	waiting := exec.Command(bin, "--data-dir", dir, "--request-timeout=30s", "get", "namespaces", "shop", "-o", "name")
	var out, errOut bytes.Buffer
	waiting.Stdout, waiting.Stderr = &out, &errOut
	if err := waiting.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if err := watcher.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := waiting.Wait(); err != nil || out.String() != "namespace/shop\n" {
		t.Fatalf("the waiting regctl: %v, stdout %q, stderr %q: want the namespace", err, out.String(), errOut.String())
	}
}

func TestSandboxRefusesWhatIsNotOne(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	other := filepath.Join(tmp, "photos")
	locked := filepath.Join(tmp, "locked")
	for _, d := range []string{other, locked} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "cat.jpg"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Another process's lock on the directory, as a regctl holds it.
	lock, err := os.Open(locked)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	before := tree(t, tmp)
	for _, tc := range []struct{ dir, want string }{
		{file, "is a file, not a directory"},
		{other, "holds files but no etcd data"},
		{filepath.Join(file, "sub"), "not a directory"},
		{locked, "is in use by another regctl"},
		// A mistyped path: a read makes no new, empty sandbox to read.
		{filepath.Join(tmp, "sandbx"), "does not exist: regctl makes a new sandbox only for a command that writes"},
	} {
		_, stderr, code := runIn(t, t.TempDir(), "--data-dir", tc.dir, "--request-timeout=300ms", "get", "pods", "-A")
		if code == 0 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, tc.dir) {
			t.Errorf("--data-dir %s: exit %d, stderr %q: want one line naming it with %q", tc.dir, code, stderr, tc.want)
		}
	}
	// Nor does a dry run, which writes nothing.
	if _, stderr, code := runIn(t, t.TempDir(), "--data-dir", filepath.Join(tmp, "sandbx"), "create", "-f", filepath.Join(examplesDir(t), "namespace.yaml"), "--dry-run"); code == 0 || !strings.Contains(stderr, "does not exist") {
		t.Errorf("a dry run on a missing sandbox: exit %d, %q", code, stderr)
	}
	if after := tree(t, tmp); !slices.Equal(before, after) {
		t.Errorf("the refused directories changed: %q, was %q", after, before)
	}
}

// tree lists every path under dir.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, _ os.DirEntry, err error) error {
		out = append(out, path)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSandboxOpensAnotherMembersDataDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeAndStop(t, dir, func(etcd string) {
		mustRunIn(t, t.TempDir(), "--etcd-servers="+etcd, "create", "-f", filepath.Join(examplesDir(t), "namespace.yaml"))
		mustRunIn(t, t.TempDir(), "--etcd-servers="+etcd, "create", "-f", filepath.Join(examplesDir(t), "secret.yaml"))
	})
	out := mustRunIn(t, t.TempDir(), "--data-dir", dir, "get", "secrets/db-password", "-n", "shop", "-o", "jsonpath={.data.password}")
	if out != "czNjcjN0" {
		t.Errorf("the copied member's secret: %q", out)
	}
	mustRunIn(t, t.TempDir(), "--data-dir", dir, "create", "-f", filepath.Join(examplesDir(t), "deployment.yaml"))
	if out := mustRunIn(t, t.TempDir(), "--data-dir", dir, "get", "deployments", "-n", "shop", "-o", "name"); out != "deployment.apps/web\n" {
		t.Errorf("written in the copied member's data: %q", out)
	}
}

// writeAndStop runs an etcd of another cluster on dir, with its own
// member name, token and peer URL, lets write fill it, adds a second member
// that never starts (a copy of one member of three has no quorum alone
// either), and stops it: what a copy of a member's /var/lib/etcd is.
func writeAndStop(t *testing.T, dir string, write func(etcd string)) {
	t.Helper()
	clientURL, peerURL := freeLoopbackURL(t), freeLoopbackURL(t)
	cfg := embed.NewConfig()
	cfg.Name = "control-plane-1"
	cfg.Dir = dir
	cfg.InitialClusterToken = "production"
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{clientURL}, []url.URL{clientURL}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peerURL}, []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		t.Fatal("the other cluster's etcd did not start")
	}
	write(clientURL.String())
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{clientURL.String()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.MemberAdd(ctx, []string{"http://192.0.2.2:2380"}); err != nil {
		t.Fatal(err)
	}
}

// freeLoopbackURL is an http URL on a loopback port free a moment ago.
func freeLoopbackURL(t *testing.T) url.URL {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(l.Addr().(*net.TCPAddr).Port))}
}

// TestSandboxIsTheOneEtcd: a sandbox and --etcd-servers name two etcds,
// while etcdctl's environment, which stands for flags not given, yields to
// the sandbox named on the command line.
func TestSandboxIsTheOneEtcd(t *testing.T) {
	// An empty directory: a new sandbox that a read may open.
	dir := t.TempDir()
	_, stderr, code := run(t, "--data-dir", dir, "--etcd-servers=http://127.0.0.1:1", "get", "namespaces")
	if code == 0 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "name two etcds") {
		t.Errorf("--data-dir with --etcd-servers: exit %d, stderr %q", code, stderr)
	}
	t.Setenv("ETCDCTL_ENDPOINTS", "http://127.0.0.1:1")
	if _, stderr, code := run(t, "--data-dir", dir, "get", "namespaces"); code != 0 {
		t.Errorf("--data-dir with ETCDCTL_ENDPOINTS set: exit %d, stderr %q: want the sandbox read", code, stderr)
	}
}

// TestSandboxCRDNamesInUse: the naming controller refuses a CRD whose names
// another CRD of its group has, and the create says so.
func TestSandboxCRDNamesInUse(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sandbox")
	// The controllers are stopped as soon as the CRD is established, not
	// when the request timeout ends, which may be never.
	start := time.Now()
	if _, stderr, code := run(t, "--data-dir", dir, "--request-timeout=0", "create", "-f", filepath.Join(examplesDir(t), "crd.yaml")); code != 0 {
		t.Fatalf("creating the CRD: exit %d: %s", code, stderr)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("creating the CRD took %s", took)
	}
	crd, err := os.ReadFile(filepath.Join(examplesDir(t), "crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// Another plural and kind, but the same singular.
	gizmos := strings.NewReplacer("widgets.example.com", "gizmos.example.com", "plural: widgets", "plural: gizmos", "kind: Widget", "kind: Gizmo", "[wd]", "[gz]").Replace(string(crd))
	file := filepath.Join(t.TempDir(), "gizmos.yaml")
	if err := os.WriteFile(file, []byte(gizmos), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := run(t, "--data-dir", dir, "create", "-f", file)
	if code == 0 || !strings.Contains(stderr, `customresourcedefinition gizmos.example.com is not established: its names are not accepted: "widget" is already in use`) {
		t.Errorf("exit %d, stderr %q: want the naming controller's refusal", code, stderr)
	}
}

// TestSandboxEstablishesManyCRDs creates more CRDs in a sandbox than are
// established within one request timeout: establishing goes on while CRDs
// are being established, and only a timeout with none established ends it.
// Each CR of them is then served.
func TestSandboxEstablishesManyCRDs(t *testing.T) {
	const n = 120
	var docs []string
	for i := range n {
		docs = append(docs, fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things%[1]d.example.com}
spec:
  group: example.com
  names: {kind: Thing%[1]d, plural: things%[1]d, singular: thing%[1]d, listKind: Thing%[1]dList}
  scope: Namespaced
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`, i))
	}
	dir := filepath.Join(t.TempDir(), "sandbox")
	start := time.Now()
	_, stderr, code := run(t, "--data-dir", dir, "--request-timeout=300ms", "create", "-f", manifestFile(t, strings.Join(docs, "---\n")))
	if code != 0 {
		t.Fatalf("creating %d CRDs with a request timeout of 300ms (establishing took %s): exit %d: %s", n, time.Since(start), code, stderr)
	}
	if got := strings.Count(stderr, " established (the sandbox runs the apiextensions controllers)"); got != n {
		t.Errorf("%d CRDs said established, want %d:\n%s", got, n, stderr)
	}
	var crs []string
	for _, i := range []int{0, n / 2, n - 1} {
		crs = append(crs, fmt.Sprintf("apiVersion: example.com/v1\nkind: Thing%d\nmetadata: {name: t, namespace: default}\n", i))
	}
	mustRun(t, "--data-dir", dir, "create", "-f", manifestFile(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n---\n"+strings.Join(crs, "---\n")))
}
