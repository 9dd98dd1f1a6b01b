package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/regctl/regctl/internal/scan"
	"github.com/regctl/regctl/test/apiserver"
)

// saveSnapshot saves a snapshot of the etcd c is a client of, as
// `etcdctl snapshot save` does, and returns its path.
func saveSnapshot(t *testing.T, c *clientv3.Client) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "backup.db")
	snapshot, err := c.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer snapshot.Close()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.Copy(f, snapshot); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSnapshotReadsEqualLiveReads fills an etcd through a real
// kube-apiserver (an object of every resource of upstream's data, a CRD and
// a custom resource, secrets encrypted with aescbc), saves a snapshot as
// `etcdctl snapshot save` does, and reads both with regctl: every read of
// the snapshot equals the same read of the live etcd, and leaves the file
// as it was.
func TestSnapshotReadsEqualLiveReads(t *testing.T) {
	t.Parallel()
	enc := "--encryption-provider-config=" + encryptionConfig(t)
	s := apiserver.Start(t, enc)
	objs := apiserver.CreateObjects(t, s, "regctl-snap", func(gvr schema.GroupVersionResource) bool {
		return gvr.Group != "apiextensions.k8s.io" && gvr.Group != "apiregistration.k8s.io"
	})
	apiserver.CreateWidgetsCRD(t, s)
	ctx := context.Background()
	createNamespace(t, s, "shop")
	if _, err := s.Client.CoreV1().Secrets("shop").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db"}, StringData: map[string]string{"password": "hunter2"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Dynamic.Resource(widgetsV1).Namespace("shop").Create(ctx, widget("v1", "alpha", map[string]any{"size": "large"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A history: a config map created, updated twice, deleted.
	cms := s.Client.CoreV1().ConfigMaps("shop")
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"mode": "slow"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"fast", "faster"} {
		cm.Data["mode"] = mode
		if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := cms.Delete(ctx, "settings", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// From here on nothing writes: the live etcd stays what was saved.
	s.Stop()
	etcd := etcdClient(t, s.EtcdURL)
	// What is older than the widget is compacted away.
	compacted := revisionOf(t, etcd) - 8
	if _, err := etcd.Compact(ctx, compacted); err != nil {
		t.Fatal(err)
	}
	path := saveSnapshot(t, etcd)
	sum := func() [32]byte {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return sha256.Sum256(data)
	}
	before := sum()

	types := []string{"widgets.example.com", "crd"}
	groups := map[string]bool{}
	for _, o := range objs {
		resource, _, _ := strings.Cut(o.Arg(), "/")
		if !slices.Contains(types, resource) {
			types = append(types, resource)
		}
		groups[o.GVR.Group] = true
	}
	if len(groups) < 8 {
		t.Fatalf("objects of %d groups, want at least 8", len(groups))
	}
	for _, args := range [][]string{
		{"get", strings.Join(types, ","), "-A", "-o", "json", "--show-managed-fields", enc},
		{"get", "secrets/db", "-n", "shop", "-o", "yaml", enc},
		{"get", "widgets", "-A", "-o", "custom-columns=NAMESPACE:.metadata.namespace,NAME:.metadata.name,SIZE:.spec.size"},
		{"keys", "-A"},
		{"keys", "secrets", "-A", "-o", "yaml"},
		{"inspect", "secrets/db", "-n", "shop", "-o", "json"},
		{"inspect", "secrets/db", "-n", "shop", enc},
		{"inspect", "widgets/alpha", "-n", "shop"},
		{"routes", "-o", "yaml"},
		{"inspect", "configmaps/settings", "-n", "shop", "--history", "-o", "json"},
		{"get", "configmaps/settings", "-n", "shop", "--revision", cm.ResourceVersion, "-o", "yaml"},
		{"keys", "configmaps", "-A", "--revision", cm.ResourceVersion},
		{"scan", "-o", "json", "--by", "namespace", enc},
	} {
		t.Run(caseName(args), func(t *testing.T) {
			want := mustRun(t, append(args, "--etcd-servers="+s.EtcdURL)...)
			got := mustRun(t, append(args, "--snapshot="+path)...)
			if got != want {
				t.Errorf("the snapshot reads\n%s\nthe live etcd\n%s", got, want)
			}
			if sum() != before {
				t.Fatal("the command changed the snapshot file")
			}
		})
	}
	// What a server wrote, one object of every resource, holds nothing a
	// scan with the server's own config finds wrong.
	var report scan.Report
	if err := json.Unmarshal([]byte(mustRun(t, "scan", "-o", "json", "--snapshot="+path, enc)), &report); err != nil {
		t.Fatal(err)
	}
	for _, kind := range scan.FindingKinds {
		if report.FindingCounts[kind] != 0 {
			t.Errorf("%d %s findings in what the server wrote: %+v", report.FindingCounts[kind], kind, report.Findings)
		}
	}
	for _, o := range objs {
		if !slices.ContainsFunc(report.Resources, func(r scan.Resource) bool { return strings.HasPrefix(o.ExpectedEtcdPath, r.KeyPrefix) }) {
			t.Errorf("the scan reports no resource holding %s", o.ExpectedEtcdPath)
		}
	}
	if !strings.Contains(mustRun(t, "routes", "--snapshot="+path), "widgets.example.com ") {
		t.Error("routes of the snapshot lack the CRD stored in it")
	}
	if history := mustRun(t, "inspect", "configmaps/settings", "-n", "shop", "--history", "--snapshot="+path); strings.Count(history, "updated") != 2 || !strings.Contains(history, "deleted") {
		t.Errorf("the snapshot's history of the config map:\n%s", history)
	}
	// A compacted revision is the same one line on both.
	old := strconv.FormatInt(compacted-1, 10)
	_, want, _ := run(t, "get", "pods", "-A", "--revision", old, "--etcd-servers="+s.EtcdURL)
	_, got, code := run(t, "get", "pods", "-A", "--revision", old, "--snapshot="+path)
	if code == 0 || got != want || !strings.Contains(got, fmt.Sprintf("the oldest revision etcd holds is %d", compacted)) {
		t.Errorf("a compacted revision on the snapshot: exit %d, %q; the live etcd says %q", code, got, want)
	}

	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"create":         {[]string{"create", "-f", manifestFile(t, shopNamespace)}, "is an etcd snapshot, which regctl only reads"},
		"delete":         {[]string{"delete", "secrets/db", "-n", "shop"}, "is an etcd snapshot, which regctl only reads"},
		"watch":          {[]string{"get", "pods", "-A", "-w"}, "is an etcd snapshot, where nothing changes"},
		"and a live one": {[]string{"get", "pods", "--etcd-servers=" + s.EtcdURL}, "`--snapshot` and `--etcd-servers` both name an etcd"},
	} {
		_, stderr, code := run(t, append(tc.args, "--snapshot="+path)...)
		if code == 0 || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q, want one line with %q", name, code, stderr, tc.want)
		}
	}
	if sum() != before {
		t.Fatal("refused commands changed the snapshot file")
	}
}

// TestBadSnapshotsAreOneLine runs the binary on files that are not
// snapshots: one line each, exit 1, and nothing left in its temporary
// directory.
func TestBadSnapshotsAreOneLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notSnapshot := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notSnapshot, []byte(strings.Repeat("not a database\n", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newLiveEtcd(t)
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace), s.flag())
	whole := filepath.Join(dir, "whole.db")
	r, err := s.client.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.db")
	if err := os.WriteFile(truncated, data[:len(data)/3], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(whole, data, 0o600); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	for name, tc := range map[string]struct{ path, want string }{
		"not a snapshot": {notSnapshot, "not an etcd snapshot"},
		"truncated":      {truncated, "it is truncated"},
		"empty":          {empty, "the file is empty, not an etcd snapshot"},
		"missing":        {filepath.Join(dir, "none.db"), "no such file or directory"},
		"a directory":    {dir, "it is a directory"},
	} {
		cmd := exec.Command(regctlBinary(t), "get", "namespaces", "--snapshot", tc.path)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		if err == nil || !strings.Contains(stderr.String(), tc.want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%s: %v, stderr %q, want one line with %q", name, err, stderr.String(), tc.want)
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left in the temporary directory: %v", left)
	}
	if out := mustRunBinary(t, "get", "namespaces", "shop", "--snapshot", whole); !strings.Contains(out, "shop ") {
		t.Errorf("the whole snapshot reads:\n%s", out)
	}
}

// TestDamagedSnapshotsAreOneLine runs the binary on copies of a snapshot
// with the head of one page overwritten, each page in turn: each is read
// as the whole one is, or refused with one line saying it is damaged and
// exit 1; never a panic or a trace; and the copy is left as it was.
func TestDamagedSnapshotsAreOneLine(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace), s.flag())
	// Keys enough for the key bucket to take pages of its own, under
	// branch pages.
	for i := range 300 {
		if _, err := s.client.Put(context.Background(), fmt.Sprintf("/filler/k%03d", i), strings.Repeat("v", 100+i)); err != nil {
			t.Fatal(err)
		}
	}
	whole := saveSnapshot(t, s.client)
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
	args := []string{"get", "namespaces", "shop", "-o", "yaml", "--snapshot"}
	want := mustRunBinary(t, append(args, whole)...)
	noise := make([]byte, 64)
	for i := range noise {
		noise[i] = byte(i*151 + 89)
	}
	dir := t.TempDir()
	var refused, intact int
	for page := range len(data) / pageSize {
		damaged := bytes.Clone(data)
		copy(damaged[page*pageSize:], noise)
		path := filepath.Join(dir, fmt.Sprintf("page-%d.db", page))
		if err := os.WriteFile(path, damaged, 0o400); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(regctlBinary(t), append(args, path)...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := cmd.ProcessState.ExitCode()
		switch {
		case err == nil && stdout.String() == want && stderr.Len() == 0:
			intact++
		case code == 1 && stdout.Len() == 0 && strings.Count(stderr.String(), "\n") == 1 &&
			strings.Contains(stderr.String(), path+": it is damaged") && strings.Contains(stderr.String(), "save the snapshot again"):
			refused++
		default:
			t.Errorf("page %d overwritten: exit %d, stdout %q, stderr %q; want the whole snapshot's read, or one line saying the file is damaged and exit 1", page, code, stdout.String(), stderr.String())
		}
		if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, damaged) {
			t.Fatalf("page %d overwritten: reading it changed the file (%v)", page, err)
		}
	}
	t.Logf("%d pages: %d copies refused, %d read whole", len(data)/pageSize, refused, intact)
}
