package main

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/scan"
	"github.com/regctl/regctl/internal/stores/history"
	"github.com/regctl/regctl/test/apiserver"
)

// TestHistoryAgreesWithKubeAPIServer writes a config map through a real
// kube-apiserver, creates it, updates it five times and deletes it, and
// checks that inspect --history lists each change, that get --revision of
// each equals what the server served then, and that the last version,
// created again from get's output, is served by the server.
func TestHistoryAgreesWithKubeAPIServer(t *testing.T) {
	t.Parallel()
	s := apiserver.Start(t)
	etcdFlag := "--etcd-servers=" + s.EtcdURL
	ctx := context.Background()
	const ns, name = "regctl-history", "app"
	cms := s.Client.CoreV1().ConfigMaps(ns)
	path := "/api/v1/namespaces/" + ns + "/configmaps/" + name
	if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// served is what the server returned after each write, by its revision.
	type version struct {
		rev  string
		json []byte
	}
	var served []version
	record := func(cm *corev1.ConfigMap, err error) *corev1.ConfigMap {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		served = append(served, version{cm.ResourceVersion, serverGET(t, s, path)})
		return cm
	}
	cm := record(cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": "0"}}, metav1.CreateOptions{}))
	wantChanged := [][]string{nil}
	updates := []struct {
		change  func(*corev1.ConfigMap)
		changed []string
	}{
		{func(c *corev1.ConfigMap) { c.Data["v"] = "1" }, []string{"data.v"}},
		{func(c *corev1.ConfigMap) { c.Labels = map[string]string{"app": "web"} }, []string{"metadata.labels"}},
		{func(c *corev1.ConfigMap) { c.Labels["app"] = "api" }, []string{"metadata.labels.app"}},
		{func(c *corev1.ConfigMap) { c.Data["w"] = "2" }, []string{"data.w"}},
		{func(c *corev1.ConfigMap) { c.Data["v"], c.Annotations = "5", map[string]string{"note": "last"} }, []string{"data.v", "metadata.annotations"}},
	}
	for _, u := range updates {
		u.change(cm)
		cm = record(cms.Update(ctx, cm, metav1.UpdateOptions{}))
		wantChanged = append(wantChanged, u.changed)
	}
	if err := cms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	var h history.Object
	if err := json.Unmarshal([]byte(mustRun(t, "inspect", "configmaps/"+name, "-n", ns, "--history", "-o", "json", etcdFlag)), &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Revisions) != 7 {
		t.Fatalf("--history lists %d revisions, want the 6 versions and the deletion: %+v", len(h.Revisions), h.Revisions)
	}
	for i, v := range served {
		e := h.Revisions[i]
		want := map[bool]string{true: history.EventCreated, false: history.EventUpdated}[i == 0]
		if strconv.FormatInt(e.Revision, 10) != v.rev || e.Order != i+1 || e.Event != want || e.ValueSize == 0 || !reflect.DeepEqual(e.Changed, wantChanged[i]) {
			t.Errorf("revision %d: %+v, want revision %s, %s, changed %v", i+1, e, v.rev, want, wantChanged[i])
		}
	}
	if last := h.Revisions[6]; last.Event != history.EventDeleted || last.Order != 7 || last.Revision <= h.Revisions[5].Revision || last.ValueSize != 0 {
		t.Errorf("the deletion: %+v", last)
	}
	table := mustRun(t, "inspect", "configmaps/"+name, "-n", ns, "--history", etcdFlag)
	if lines := strings.Split(strings.TrimSpace(table), "\n"); len(lines) != 8 || !strings.Contains(lines[7], "deleted") || !strings.Contains(lines[2], "data.v") {
		t.Errorf("--history table:\n%s", table)
	}

	for _, v := range served {
		got := mustRun(t, "get", "configmaps/"+name, "-n", ns, "--revision", v.rev, "-o", "json", "--show-managed-fields", etcdFlag)
		if normalize(t, []byte(got)) != normalize(t, v.json) {
			t.Errorf("get --revision %s differs from what the server served\nregctl:    %s\napiserver: %s", v.rev, normalize(t, []byte(got)), normalize(t, v.json))
		}
	}
	deletedAt := strconv.FormatInt(h.Revisions[6].Revision, 10)
	if _, stderr, code := run(t, "get", "configmaps/"+name, "-n", ns, "--revision", deletedAt, etcdFlag); code != 1 || !strings.Contains(stderr, "not found") {
		t.Errorf("get at the deletion's revision: exit %d, %q: want not found", code, stderr)
	}

	last := served[len(served)-1]
	yaml := mustRun(t, "get", "configmaps/"+name, "-n", ns, "--revision", last.rev, "-o", "yaml", etcdFlag)
	mustRun(t, "create", "-f", manifestFile(t, yaml), etcdFlag)
	restored, err := cms.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the restored config map is not served: %v", err)
	}
	if !reflect.DeepEqual(restored.Data, cm.Data) || !reflect.DeepEqual(restored.Labels, cm.Labels) || !reflect.DeepEqual(restored.Annotations, cm.Annotations) {
		t.Errorf("restored %v %v %v, want %v %v %v", restored.Data, restored.Labels, restored.Annotations, cm.Data, cm.Labels, cm.Annotations)
	}
}

// TestRevisionBounds reads at revisions etcd no longer holds or has not
// reached, refuses --revision on writes, and checks that reads in the past
// write nothing.
func TestRevisionBounds(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	s.createPods(t, "default", 3, nil)
	first := s.revision(t) - 2
	s.createPods(t, "other", 2, nil)
	compacted := s.revision(t) - 1
	if _, err := s.client.Compact(context.Background(), compacted); err != nil {
		t.Fatal(err)
	}
	current := s.revision(t)

	oneLine := func(args []string, want string) {
		t.Helper()
		_, stderr, code := run(t, append(args, s.flag())...)
		if code == 0 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) {
			t.Errorf("%v: exit %d, stderr %q: want one line saying %q", args, code, stderr, want)
		}
	}
	tooOld := fmt.Sprintf("revision %d has been compacted: the oldest revision etcd holds is %d", first, compacted)
	future := fmt.Sprintf("revision %d is in the future: etcd's current revision is %d", current+10, current)
	for _, args := range [][]string{
		{"get", "pods", "-A"},
		{"get", "pods/pod-00000"},
		{"keys", "pods", "-A"},
		{"keys", "pods/pod-00000", "--check"},
		{"inspect", "pods/pod-00000"},
		{"scan"},
	} {
		oneLine(append(args, "--revision", strconv.FormatInt(first, 10)), tooOld)
		oneLine(append(args, "--revision", strconv.FormatInt(current+10, 10)), future)
	}
	for _, args := range [][]string{
		{"create", "-f", manifestFile(t, shopNamespace)},
		{"replace", "-f", manifestFile(t, shopNamespace)},
		{"delete", "pods/pod-00000"},
	} {
		oneLine(append(args, "--revision", "3"), "`--revision` is for reads")
	}
	oneLine([]string{"routes", "--revision", "3"}, "`--revision` is for get, keys, inspect, scan and why")

	// At the compaction, the pods of "other" were not all created yet.
	at := strconv.FormatInt(compacted, 10)
	if got := mustRun(t, "get", "pods", "-n", "other", "--revision", at, "-o", "name", s.flag()); got != "pod/pod-00000\n" {
		t.Errorf("get at the compacted revision: %q", got)
	}
	if got := mustRun(t, "get", "pods", "-A", "--revision", at, "--chunk-size", "1", "-o", "name", s.flag()); strings.Count(got, "\n") != 4 {
		t.Errorf("get page by page at the compacted revision: %q", got)
	}
	if got := mustRun(t, "keys", "pods", "-A", "--revision", at, s.flag()); strings.Count(got, "\n") != 4 {
		t.Errorf("keys at the compacted revision: %q", got)
	}
	var scanned scan.Report
	if err := json.Unmarshal([]byte(mustRun(t, "scan", "--only", "size", "--by", "namespace", "-o", "json", "--revision", at, s.flag())), &scanned); err != nil {
		t.Fatal(err)
	}
	if scanned.Revision != compacted || resourceOf(t, &scanned, "pods", "other").Keys != 1 {
		t.Errorf("scan at the compacted revision: revision %d, resources %+v", scanned.Revision, scanned.Resources)
	}
	for _, args := range [][]string{
		{"get", "pods", "-A", "--revision", at, "-o", "json"},
		{"get", "pods/pod-00000", "-n", "other", "--revision", at, "-o", "yaml"},
		{"keys", "pods/pod-00000", "-n", "other", "--check", "--revision", at},
		{"inspect", "pods/pod-00000", "-n", "other", "--revision", at},
		{"inspect", "pods/pod-00001", "-n", "other", "--history"},
		{"inspect", "pods/pod-00000", "--history"},
		{"get", "pods", "--revision", strconv.FormatInt(first, 10)},
	} {
		run(t, append(args, s.flag())...)
	}
	if after := s.revision(t); after != current {
		t.Fatalf("etcd revision moved from %d to %d: a read wrote", current, after)
	}

	// The history after a compaction starts with the value held then.
	var h history.Object
	if err := json.Unmarshal([]byte(mustRun(t, "inspect", "pods/pod-00000", "-n", "other", "--history", "-o", "json", s.flag())), &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Revisions) != 1 || h.Revisions[0].Event != history.EventCreated || h.Revisions[0].Revision != compacted {
		t.Errorf("history of the pod created at the compaction: %+v", h.Revisions)
	}
	// One written before it is read as it was held at the compaction
	// revision, and says when it was written: every row's revision can
	// be read.
	h = history.Object{}
	if err := json.Unmarshal([]byte(mustRun(t, "inspect", "pods/pod-00000", "--history", "-o", "json", s.flag())), &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Revisions) != 1 || h.Revisions[0].Event != history.EventCompacted || h.Revisions[0].Revision != compacted || h.Revisions[0].WrittenAt != first || h.Revisions[0].Problem != "" {
		t.Errorf("history of the pod written before the compaction: %+v", h.Revisions)
	}
	for _, r := range h.Revisions {
		mustRun(t, "get", "pods/pod-00000", "--revision", strconv.FormatInt(r.Revision, 10), s.flag())
	}
	table := mustRun(t, "inspect", "pods/pod-00000", "--history", s.flag())
	if want := fmt.Sprintf("<as held at the compaction revision; written at revision %d>", first); !strings.Contains(table, want) {
		t.Errorf("the history table does not say %q:\n%s", want, table)
	}
}

// TestWatchFromRevision: get -w --revision N prints the objects as they
// were at N, then every change after N, as a watch from resourceVersion N
// replays them; --watch-only prints the changes alone.
func TestWatchFromRevision(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	s.createPods(t, "default", 1, nil)
	at := s.revision(t)
	s.createPods(t, "default", 1, func(_ int, p *api.Pod) { p.Name = "later" })
	if _, err := s.client.Delete(context.Background(), "/registry/pods/default/pod-00000"); err != nil {
		t.Fatal(err)
	}
	deleted := s.revision(t)
	want := map[bool][]string{
		false: {"ADDED pod-00000 " + strconv.FormatInt(at, 10), "ADDED later " + strconv.FormatInt(at+1, 10), "DELETED pod-00000 " + strconv.FormatInt(deleted, 10)},
		true:  {"ADDED later " + strconv.FormatInt(at+1, 10), "DELETED pod-00000 " + strconv.FormatInt(deleted, 10)},
	}
	for _, only := range []bool{false, true} {
		args := []string{"get", "pods", "--revision", strconv.FormatInt(at, 10), "-o", "json", "--output-watch-events", s.flag()}
		if only {
			args = append(args, "--watch-only")
		} else {
			args = append(args, "-w")
		}
		r := startWatch(t, args...)
		r.waitFor(t, "the deletion", func(out string) bool { return strings.Contains(out, `"DELETED"`) })
		r.interrupt(t)
		var got []string
		for _, e := range jsonEvents(t, r.out.String()) {
			got = append(got, fmt.Sprintf("%s %s %s", e.Type, e.Object.Metadata.Name, e.Object.Metadata.ResourceVersion))
		}
		if !reflect.DeepEqual(got, want[only]) {
			t.Errorf("%v: events %q, want %q", args, got, want[only])
		}
	}
	_, stderr, code := run(t, "get", "pods", "--watch-only", "--resource-version", "2", "--revision", "2", s.flag())
	if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "give one") {
		t.Errorf("--resource-version with --revision: exit %d, %q", code, stderr)
	}
}
