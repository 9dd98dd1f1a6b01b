package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/regctl/regctl/test/apiserver"

	"github.com/regctl/regctl/internal/cli"
)

// syncBuffer is a buffer a running command writes while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// runningWatch is `regctl get -w` running in-process until interrupted.
type runningWatch struct {
	out, errOut *syncBuffer
	cancel      context.CancelCauseFunc
	done        chan int
}

func startWatch(t *testing.T, args ...string) *runningWatch {
	t.Helper()
	ctx, cancel := context.WithCancelCause(context.Background())
	r := &runningWatch{out: &syncBuffer{}, errOut: &syncBuffer{}, cancel: cancel, done: make(chan int, 1)}
	go func() {
		r.done <- Run(ctx, cli.IOStreams{In: &bytes.Buffer{}, Out: r.out, ErrOut: r.errOut}, args)
	}()
	t.Cleanup(func() { cancel(errInterrupted) })
	return r
}

// waitFor polls stdout until ok says it holds what the test waits for.
func (r *runningWatch) waitFor(t *testing.T, what string, ok func(stdout string) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok(r.out.String()) {
		select {
		case code := <-r.done:
			t.Fatalf("waiting for %s: regctl ended with exit %d: %s\nstdout:\n%s", what, code, r.errOut.String(), r.out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: not printed within 30s; stderr %q\nstdout:\n%s", what, r.errOut.String(), r.out.String())
		}
	}
}

// interrupt is Ctrl-C: the command must end at once, with exit code 130.
func (r *runningWatch) interrupt(t *testing.T) {
	t.Helper()
	start := time.Now()
	r.cancel(errInterrupted)
	select {
	case code := <-r.done:
		if code != exitInterrupted || time.Since(start) > time.Second {
			t.Errorf("exit %d after %s on Ctrl-C: want 130 within a second; stderr %q", code, time.Since(start), r.errOut.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the watch did not end on Ctrl-C")
	}
}

// ended waits for the watch to end by itself, and returns its exit code.
func (r *runningWatch) ended(t *testing.T) int {
	t.Helper()
	select {
	case code := <-r.done:
		return code
	case <-time.After(30 * time.Second):
		t.Fatalf("the watch did not end; stderr %q", r.errOut.String())
		return 0
	}
}

// watchEvent is a line of `-o json --output-watch-events`.
type watchEvent struct {
	Type   string `json:"type"`
	Object struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name            string `json:"name"`
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	} `json:"object"`
}

// jsonEvents reads one event per line, failing on a line that is not one.
func jsonEvents(t *testing.T, stdout string) []watchEvent {
	t.Helper()
	var events []watchEvent
	for _, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		if line == "" {
			continue
		}
		var e watchEvent
		if err := json.Unmarshal([]byte(line), &e); err != nil || e.Type == "" || e.Object.Kind == "" {
			t.Fatalf("not a watch event on one line (%v): %s", err, line)
		}
		events = append(events, e)
	}
	return events
}

// eventsOf is "TYPE@resourceVersion" for each event of the named object.
func eventsOf(events []watchEvent, name string) []string {
	var out []string
	for _, e := range events {
		if e.Object.Metadata.Name == name {
			out = append(out, e.Type+"@"+e.Object.Metadata.ResourceVersion)
		}
	}
	return out
}

// podLifecycle creates, relabels and deletes a pod through the apiserver
// and returns the events the apiserver's own watch reports for it (deletion
// through the pod store's graceful path writes the pod once more before
// deleting it). Each write must be among them, at the resourceVersion the
// apiserver returned for it.
func podLifecycle(t *testing.T, s *apiserver.Server, ns, name string) []string {
	t.Helper()
	ctx := context.Background()
	pods := s.Client.CoreV1().Pods(ns)
	oracle, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	defer oracle.Stop()
	created, err := pods.Create(ctx, testPod(name), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Labels = map[string]string{"tier": "front"}
	updated, err := pods.Update(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The typed client drops the deleted object the server returns; it
	// carries the revision of the deletion.
	obj, err := s.Client.CoreV1().RESTClient().Delete().Namespace(ns).Resource("pods").Name(name).
		Body(&metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}).Do(ctx).Get()
	if err != nil {
		t.Fatal(err)
	}
	deleted, ok := obj.(*corev1.Pod)
	if !ok {
		t.Fatalf("deleting %s returned a %T, not the pod", name, obj)
	}
	seen := apiserverEvents(t, oracle)
	for _, w := range []string{"ADDED@" + created.ResourceVersion, "MODIFIED@" + updated.ResourceVersion, "DELETED@" + deleted.ResourceVersion} {
		if !slices.Contains(seen, w) {
			t.Fatalf("the apiserver's watch saw %v, without %s", seen, w)
		}
	}
	return seen
}

// apiserverEvents reads a watch of the apiserver up to a deletion.
func apiserverEvents(t *testing.T, w watch.Interface) []string {
	t.Helper()
	var seen []string
	for {
		select {
		case e, ok := <-w.ResultChan():
			pod, isPod := e.Object.(*corev1.Pod)
			if !ok || !isPod {
				t.Fatalf("the apiserver's watch ended or failed (%v) after %v", e.Object, seen)
			}
			seen = append(seen, string(e.Type)+"@"+pod.ResourceVersion)
			if e.Type == watch.Deleted {
				return seen
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("the apiserver's watch saw no deletion: %v", seen)
		}
	}
}

func testPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
}

func createNamespace(t *testing.T, s *apiserver.Server, ns string) {
	t.Helper()
	if _, err := s.Client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// markers numbers marker pods, so that each has a name of its own.
var markers atomic.Int64

// waitWatching creates marker pods until one is printed: from then on the
// watch's start revision has been read, and every later write is reported.
func waitWatching(t *testing.T, s *apiserver.Server, r *runningWatch, ns string) {
	t.Helper()
	for i := 0; i < 20; i++ {
		name := fmt.Sprintf("m%d", markers.Add(1))
		if _, err := s.Client.CoreV1().Pods(ns).Create(context.Background(), testPod(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if printedWithin(r, name, time.Second) {
			return
		}
	}
	t.Fatalf("no marker pod printed; stderr %q", r.errOut.String())
}

// printedWithin tells whether a line of stdout names name within limit.
func printedWithin(r *runningWatch, name string, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		for _, line := range strings.Split(r.out.String(), "\n") {
			if slices.Contains(strings.FieldsFunc(line, func(c rune) bool { return strings.ContainsRune(" \t\",:", c) }), name) {
				return true
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// TestWatchAgreesWithKubeAPIServer writes through a real kube-apiserver and
// wants regctl's watch, which reads etcd alone, to report each write with
// the resourceVersion the apiserver returned for it.
func TestWatchAgreesWithKubeAPIServer(t *testing.T) {
	t.Parallel()
	s := apiserver.Start(t)
	etcdFlag := "--etcd-servers=" + s.EtcdURL
	t.Run("json events", func(t *testing.T) { checkWatchJSONEvents(t, s, etcdFlag) })
	t.Run("table", func(t *testing.T) { checkWatchTables(t, s, etcdFlag) })
	t.Run("watch-only prints no list", func(t *testing.T) { checkWatchOnly(t, s, etcdFlag) })
}

// checkWatchJSONEvents wants one json watch event per line, and for one
// pod the events the apiserver's watch saw, at the same resourceVersions.
func checkWatchJSONEvents(t *testing.T, s *apiserver.Server, etcdFlag string) {
	createNamespace(t, s, "watch-json")
	r := startWatch(t, "get", "pods", "-n", "watch-json", "-w", "-o", "json", "--output-watch-events", etcdFlag)
	waitWatching(t, s, r, "watch-json")
	want := podLifecycle(t, s, "watch-json", "web")
	r.waitFor(t, "the deletion of web", func(out string) bool { return strings.Contains(out, `"type":"DELETED"`) })
	r.interrupt(t)
	if got := eventsOf(jsonEvents(t, r.out.String()), "web"); !slices.Equal(got, want) {
		t.Errorf("regctl printed %v for pod web; the apiserver's watch saw %v", got, want)
	}
}

// checkWatchTables watches as a table, then with an EVENT column.
func checkWatchTables(t *testing.T, s *apiserver.Server, etcdFlag string) {
	createNamespace(t, s, "watch-table")
	// The longest name, listed first, sets the NAME column's width.
	if _, err := s.Client.CoreV1().Pods("watch-table").Create(context.Background(), testPod(listedPod), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, events := range []bool{false, true} {
		args := []string{"get", "pods", "-n", "watch-table", "-w", etcdFlag}
		if events {
			args = append(args, "--output-watch-events")
		}
		name := fmt.Sprintf("web-%t", events)
		r := startWatch(t, args...)
		waitWatching(t, s, r, "watch-table")
		want := podLifecycle(t, s, "watch-table", name)
		r.waitFor(t, "a row per event", func(out string) bool { return strings.Count(out, name+" ") == len(want) })
		r.interrupt(t)
		checkWatchTable(t, r.out.String(), name, eventTypes(want), events)
	}
}

// checkWatchOnly wants the changes only, as yaml documents, and not the
// pod that was there before.
func checkWatchOnly(t *testing.T, s *apiserver.Server, etcdFlag string) {
	createNamespace(t, s, "watch-only")
	if _, err := s.Client.CoreV1().Pods("watch-only").Create(context.Background(), testPod("old"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := startWatch(t, "get", "pods", "-n", "watch-only", "--watch-only", "-o", "yaml", etcdFlag)
	waitWatching(t, s, r, "watch-only")
	want := podLifecycle(t, s, "watch-only", "web")
	r.waitFor(t, "the deletion of web", func(out string) bool { return strings.Count(out, "name: web\n") == len(want) })
	r.interrupt(t)
	for _, doc := range strings.Split(r.out.String(), "---\n") {
		var pod corev1.Pod
		if err := yaml.Unmarshal([]byte(doc), &pod); err != nil || pod.Kind != "Pod" {
			t.Fatalf("not a pod document (%v):\n%s", err, doc)
		}
		if pod.Name == "old" {
			t.Errorf("--watch-only printed pod old, which was there before the watch:\n%s", r.out.String())
		}
	}
}

// eventTypes are the types of events written TYPE@resourceVersion.
func eventTypes(events []string) []string {
	var out []string
	for _, e := range events {
		typ, _, _ := strings.Cut(e, "@")
		out = append(out, typ)
	}
	return out
}

// listedPod is a pod there before the watch, with a long name.
const listedPod = "a-pod-listed-before-the-watch"

// checkWatchTable wants kubectl's watch table: the header once, first, the
// pods there before the watch (ADDED), then a row per change of pod name
// (types, as the apiserver's watch saw them). Rows printed one at a time line up with
// those above, as kubectl's tabwriter remembers column widths.
func checkWatchTable(t *testing.T, out, name string, types []string, events bool) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	header := []string{"NAME", "READY", "STATUS", "RESTARTS", "AGE"}
	col := 0
	if events {
		header, col = append([]string{"EVENT"}, header...), 1
	}
	if got := strings.Fields(lines[0]); strings.Join(got, " ") != strings.Join(header, " ") {
		t.Fatalf("header %q, want %v:\n%s", lines[0], header, out)
	}
	readyAt := strings.Index(lines[0], "READY")
	var changes []string
	listed := false
	for _, line := range lines[1:] {
		f := strings.Fields(line)
		switch {
		case len(f) != len(header):
			t.Errorf("row %q does not have the header's %d columns", line, len(header))
		case f[col] == "NAME":
			t.Errorf("header printed again:\n%s", out)
		case strings.Index(line, " 0/1 ") != readyAt-1:
			t.Errorf("row %q not lined up with the header:\n%s", line, out)
		case f[col] == listedPod:
			listed = !events || f[0] == "ADDED"
		case f[col] == name:
			changes = append(changes, f[0])
		}
	}
	want := types
	if !events {
		want = slices.Repeat([]string{name}, len(types))
	}
	if !slices.Equal(changes, want) {
		t.Errorf("rows of %s begin with %v, want %v:\n%s", name, changes, want, out)
	}
	if !listed {
		t.Errorf("%s, there before the watch, is not listed (as ADDED with events):\n%s", listedPod, out)
	}
}

// TestWatchWritesNothing watches an etcd no one writes to: its revision
// must not move, and Ctrl-C must end each watch at once with exit 130.
func TestWatchWritesNothing(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	s.createPods(t, "default", 3, nil)
	before := s.revision(t)
	for _, args := range [][]string{
		{"get", "pods", "-w"},
		{"get", "pods", "-A", "-w", "-o", "yaml", "--output-watch-events"},
		{"get", "pods/pod-00001", "-w", "-o", "json"},
		{"get", "pods", "--watch-only", "-o", "name"},
		{"get", "pods", "--watch-only", "--resource-version", strconv.FormatInt(before, 10)},
	} {
		r := startWatch(t, append(args, s.flag())...)
		if slices.Contains(args, "--watch-only") {
			// Nothing is printed: give it the time to build the map.
			time.Sleep(2 * time.Second)
		} else {
			r.waitFor(t, "the list", func(out string) bool { return strings.Contains(out, "pod-00001") })
		}
		// Long enough for the etcd watch to be in place.
		time.Sleep(300 * time.Millisecond)
		r.interrupt(t)
		if stderr := r.errOut.String(); stderr != "error: interrupted\n" {
			t.Errorf("%v: stderr %q, want only that it was interrupted", args, stderr)
		}
	}
	if after := s.revision(t); after != before {
		t.Fatalf("etcd revision moved from %d to %d: a watch wrote", before, after)
	}
}

// TestWatchReportsChangesAsEtcdSeesThem needs no apiserver: writes through
// the stores, or straight to etcd, are reported from etcd's watch.
func TestWatchReportsChangesAsEtcdSeesThem(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	s.createPods(t, "default", 2, nil)
	r := startWatch(t, "get", "pods/pod-00007", "-w", "-o", "yaml", "--output-watch-events", s.flag())
	// Not there yet: a named object must exist, as kubectl wants.
	if code := r.ended(t); code != 1 || !strings.Contains(r.errOut.String(), `pods "pod-00007" not found`) {
		t.Errorf("exit %d, stderr %q: want pods \"pod-00007\" not found", code, r.errOut.String())
	}

	r = startWatch(t, "get", "pods/pod-00001", "-w", "-o", "yaml", "--output-watch-events", s.flag())
	r.waitFor(t, "the pod", func(out string) bool { return strings.Contains(out, "name: pod-00001") })
	// A watch on one name sees no other object.
	s.createPods(t, "default", 3, func(i int, p *api.Pod) { p.Name = fmt.Sprintf("other-%d", i) })
	if _, err := s.client.Delete(context.Background(), "/registry/pods/default/pod-00001"); err != nil {
		t.Fatal(err)
	}
	r.waitFor(t, "the deletion", func(out string) bool { return strings.Contains(out, "type: DELETED") })
	r.interrupt(t)
	var types []string
	for _, doc := range strings.Split(r.out.String(), "---\n") {
		var e struct {
			Type   string
			Object corev1.Pod
		}
		if err := yaml.Unmarshal([]byte(doc), &e); err != nil || e.Object.Name != "pod-00001" {
			t.Fatalf("not an event of pod-00001 (%v):\n%s", err, doc)
		}
		types = append(types, e.Type)
	}
	if strings.Join(types, " ") != "ADDED DELETED" {
		t.Errorf("events %v, want the pod ADDED, then DELETED", types)
	}
}

// TestWatchFromCompactedRevision wants one line that says the start is too
// old and what to do.
func TestWatchFromCompactedRevision(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	s.createPods(t, "default", 3, nil)
	rev := s.revision(t)
	if _, err := s.client.Compact(context.Background(), rev); err != nil {
		t.Fatal(err)
	}
	old := strconv.FormatInt(rev-2, 10)
	_, stderr, code := runWithin(t, 30*time.Second, "get", "pods", "--watch-only", "--resource-version", old, s.flag())
	if code != 1 || strings.Count(stderr, "\n") != 1 ||
		!strings.Contains(stderr, "resourceVersion "+old+" is too old") || !strings.Contains(stderr, "`--resource-version`") {
		t.Errorf("exit %d, stderr %q: want one line saying %s is too old and what to do", code, stderr, old)
	}
}

// TestWatchUnreadableValues: a change whose value cannot be decoded ends
// the watch with one error line, whether it is written or deleted.
func TestWatchUnreadableValues(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	ctx := context.Background()
	if _, err := s.client.Put(ctx, "/registry/pods/default/bad", "\x00garbage"); err != nil {
		t.Fatal(err)
	}
	for _, change := range []func() error{
		func() error { _, err := s.client.Delete(ctx, "/registry/pods/default/bad"); return err },
		func() error { _, err := s.client.Put(ctx, "/registry/pods/default/bad", "\x00garbage"); return err },
	} {
		r := startWatch(t, "get", "pods", "--watch-only", "-o", "json", s.flag())
		waitWatchingEtcd(t, s, r)
		if err := change(); err != nil {
			t.Fatal(err)
		}
		code := r.ended(t)
		if stderr := r.errOut.String(); code != 1 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "error: watching pods after resourceVersion ") {
			t.Errorf("exit %d, stderr %q: want one line saying the watch stopped", code, stderr)
		}
	}
}

// waitWatchingEtcd creates marker pods through the stores until one is
// printed, and returns its name.
func waitWatchingEtcd(t *testing.T, s *liveEtcd, r *runningWatch) string {
	t.Helper()
	for i := 0; i < 20; i++ {
		name := fmt.Sprintf("m%d", markers.Add(1))
		s.createPods(t, "default", 1, func(_ int, p *api.Pod) { p.Name = name })
		if printedWithin(r, name, time.Second) {
			return name
		}
	}
	t.Fatalf("no marker pod printed; stderr %q", r.errOut.String())
	return ""
}

func TestWatchBadInput(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	s.createPods(t, "default", 1, nil)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "pods", "--output-watch-events"}, "`--output-watch-events` needs `--watch` or `--watch-only`"},
		{[]string{"get", "pods", "-w", "--resource-version", "5"}, "`--resource-version` needs `--watch-only`"},
		{[]string{"get", "pods", "--watch-only", "--resource-version", "five"}, "invalid `--resource-version` \"five\""},
		{[]string{"get", "pods", "pod-00000", "pod-00001", "-w"}, "name one object at most"},
		{[]string{"get", "pods/status", "pod-00000", "-w"}, "pods/status cannot be watched"},
	} {
		_, stderr, code := runWithin(t, 30*time.Second, append(tc.args, s.flag())...)
		if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q: want one line with %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestWatchCtrlCExits130 sends a real SIGINT to a watching regctl.
func TestWatchCtrlCExits130(t *testing.T) {
	bin := regctlBinary(t)
	s := newLiveEtcd(t)
	s.createPods(t, "default", 2, nil)
	cmd, stdout, stderr := startBinary(t, bin, "get", "pods", "-w", s.flag())
	defer cmd.Process.Kill()
	// The table of the two pods comes first; then the watch waits.
	lines := bufio.NewScanner(stdout)
	listed := false
	for !listed && lines.Scan() {
		listed = strings.HasPrefix(lines.Text(), "pod-00001 ")
	}
	if !listed {
		t.Fatalf("want the table of pods first (%v); stderr %q", lines.Err(), stderr.String())
	}
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, stdout)
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 || time.Since(start) > 2*time.Second {
		t.Errorf("exit %v after %s: want 130 at once", err, time.Since(start))
	}
	if stderr.String() != "error: interrupted\n" {
		t.Errorf("stderr %q: want one line saying it was interrupted", stderr.String())
	}
}

// TestWatchFollowsKubectlOutputFlags: kubectl get's output options apply to
// a watch as they do in kubectl: --no-headers, and template printers, which
// see each object, or each event with --output-watch-events.
func TestWatchFollowsKubectlOutputFlags(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	s.createPods(t, "default", 2, nil)
	// Each watch lists the markers of those before it too, ahead of the
	// two pods (m... sorts first); its own marker comes last, as a change.
	for _, tc := range []struct {
		args  []string
		check func(stdout, marker string) bool
	}{
		{[]string{"--no-headers"}, func(out, marker string) bool {
			return !strings.Contains(out, "NAME") && strings.Contains(out, "\npod-00001 ") && strings.Contains(out, "\n"+marker+" ")
		}},
		{[]string{"-o", `jsonpath={.metadata.name}{"\n"}`}, func(out, marker string) bool {
			return strings.Contains(out, "pod-00000\npod-00001\n") && strings.HasSuffix(out, "\n"+marker+"\n")
		}},
		{[]string{"--output-watch-events", "-o", `jsonpath={.type} {.object.metadata.name}{"\n"}`}, func(out, marker string) bool {
			return strings.Contains(out, "ADDED pod-00000\nADDED pod-00001\n") && strings.HasSuffix(out, "\nADDED "+marker+"\n")
		}},
	} {
		r := startWatch(t, append([]string{"get", "pods", "-w", s.flag()}, tc.args...)...)
		r.waitFor(t, "the list", func(out string) bool { return strings.Contains(out, "pod-00001") })
		// The marker's number is this test's own: other tests running
		// beside it number theirs from the same counter.
		marker := waitWatchingEtcd(t, s, r)
		r.interrupt(t)
		if out := r.out.String(); !tc.check(out, marker) {
			t.Errorf("%v: unexpected output:\n%s", tc.args, out)
		}
	}
}

// TestWatchSaysWhenEtcdIsLostAndGoesOn stops the etcd a watch follows: the
// watch says once that it lost etcd and is reconnecting, and when etcd is
// back on the same address it prints the changes made since.
func TestWatchSaysWhenEtcdIsLostAndGoesOn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ports := freePorts(t, 2)
	start := func() *embed.Etcd {
		t.Helper()
		cfg := embed.NewConfig()
		cfg.Dir = dir
		cfg.TickMs, cfg.ElectionMs = 10, 100
		client := url.URL{Scheme: "http", Host: "127.0.0.1:" + ports[0]}
		peer := url.URL{Scheme: "http", Host: "127.0.0.1:" + ports[1]}
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
		cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
		cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
		e, err := embed.StartEtcd(cfg)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-e.Server.ReadyNotify():
		case <-time.After(30 * time.Second):
			t.Fatal("etcd did not become ready")
		}
		return e
	}
	e := start()
	s := &liveEtcd{url: "http://127.0.0.1:" + ports[0]}
	s.createPods(t, "default", 1, nil)
	r := startWatch(t, "get", "pods", "-w", "--no-headers", s.flag())
	r.waitFor(t, "the pod", func(out string) bool { return strings.Contains(out, "pod-00000") })

	e.Close()
	deadline := time.Now().Add(20 * time.Second)
	const lost = "warning: lost the connection to etcd; reconnecting, the watch goes on from where it stopped\n"
	for !strings.Contains(r.errOut.String(), lost) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if r.errOut.String() != lost {
		t.Fatalf("stderr %q once etcd stopped: want one line saying the watch reconnects", r.errOut.String())
	}

	e = start()
	defer e.Close()
	s.createPods(t, "default", 1, func(_ int, p *api.Pod) { p.Name = "after" })
	r.waitFor(t, "the pod created once etcd was back", func(out string) bool { return strings.Contains(out, "after ") })
	r.interrupt(t)
	if got := r.errOut.String(); got != lost+"error: interrupted\n" {
		t.Errorf("stderr %q: want the one warning, then the interrupt", got)
	}
}
