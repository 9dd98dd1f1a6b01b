package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/rest"
	api "k8s.io/kubernetes/pkg/apis/core"
	"sigs.k8s.io/yaml"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/cli/rootcmd"
	"github.com/regctl/regctl/internal/completion"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/stores"
)

// tableLines splits a table into its lines, each with its cells.
func tableLines(out string) [][]string {
	var lines [][]string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l != "" {
			lines = append(lines, strings.Fields(l))
		}
	}
	return lines
}

func TestGetNamedObjectsPrintTables(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace+`---
apiVersion: v1
kind: Node
metadata:
  name: node-1
---
apiVersion: v1
kind: Service
metadata:
  name: db
  namespace: shop
spec:
  type: ExternalName
  externalName: db.example.com
`), s.flag())
	s.createPods(t, "shop", 2, nil)

	for _, tc := range []struct {
		args   []string
		header []string
		rows   []string
	}{
		{[]string{"get", "pods/pod-00000", "-n", "shop"}, []string{"NAME", "READY", "STATUS", "RESTARTS", "AGE"}, []string{"pod-00000"}},
		{[]string{"get", "pods", "pod-00001", "pod-00000", "-n", "shop"}, []string{"NAME", "READY", "STATUS", "RESTARTS", "AGE"}, []string{"pod-00001", "pod-00000"}},
		{[]string{"get", "pods/pod-00000", "-n", "shop", "-o", "wide"}, []string{"NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED", "NODE", "READINESS", "GATES"}, []string{"pod-00000"}},
		{[]string{"get", "pods/status", "pod-00000", "-n", "shop"}, []string{"NAME", "READY", "STATUS", "RESTARTS", "AGE"}, []string{"pod-00000"}},
		{[]string{"get", "svc", "db", "-n", "shop"}, []string{"NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"}, []string{"db"}},
		{[]string{"get", "nodes", "node-1"}, []string{"NAME", "STATUS", "ROLES", "AGE", "VERSION"}, []string{"node-1"}},
	} {
		stdout, stderr, code := run(t, append(tc.args, s.flag())...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", tc.args, code, stderr)
			continue
		}
		lines := tableLines(stdout)
		if len(lines) != 1+len(tc.rows) || strings.Join(lines[0], " ") != strings.Join(tc.header, " ") {
			t.Errorf("%v: want a header %v and %d rows, got:\n%s", tc.args, tc.header, len(tc.rows), stdout)
			continue
		}
		for i, name := range tc.rows {
			if lines[1+i][0] != name {
				t.Errorf("%v: row %d is %v, want %s", tc.args, i+1, lines[1+i], name)
			}
		}
	}

	// A named pod shows the row its list shows.
	one := tableLines(mustRun(t, "get", "pods/pod-00001", "-n", "shop", "-o", "wide", s.flag()))
	all := tableLines(mustRun(t, "get", "pods", "-n", "shop", "-o", "wide", s.flag()))
	if len(all) != 3 || strings.Join(one[1][:4], " ") != strings.Join(all[2][:4], " ") {
		t.Errorf("get pods/pod-00001 row %v, get pods row %v", one[1], all[2])
	}
}

func TestFailedGetsPrintNothing(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	s.createPods(t, "default", 1, nil)
	for _, tc := range []struct {
		args  []string
		lines int
	}{
		{[]string{"get", "pods/nope", "-o", "yaml"}, 1},
		{[]string{"get", "pods/nope", "-o", "json"}, 1},
		{[]string{"get", "pods/nope"}, 1},
		{[]string{"get", "pods", "nope-1", "nope-2", "-o", "yaml"}, 2},
		{[]string{"get", "pods", "nope-1", "nope-2", "-o", "json"}, 2},
	} {
		stdout, stderr, code := run(t, append(tc.args, s.flag())...)
		if code == 0 || stdout != "" || strings.Count(stderr, "\n") != tc.lines || !strings.Contains(stderr, `pods "nope`) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q: want nothing printed, and %d error lines", tc.args, code, stdout, stderr, tc.lines)
		}
	}

	// Some found: those are printed, as kubectl prints them.
	stdout, stderr, code := run(t, "get", "pods", "pod-00000", "nope", "-o", "yaml", s.flag())
	var list struct {
		Kind  string
		Items []struct{ Metadata struct{ Name string } }
	}
	if code != 1 || yaml.Unmarshal([]byte(stdout), &list) != nil || list.Kind != "List" || len(list.Items) != 1 || list.Items[0].Metadata.Name != "pod-00000" {
		t.Errorf("one found of two: exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
	stdout, _, code = run(t, "get", "pods", "pod-00000", "nope", s.flag())
	if lines := tableLines(stdout); code != 1 || len(lines) != 2 || lines[1][0] != "pod-00000" {
		t.Errorf("one found of two as a table: exit %d:\n%s", code, stdout)
	}
}

// cancelOnWrite cancels a command's context on the first write to it, that
// is once the first page of a list is being printed.
type cancelOnWrite struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	cancel context.CancelFunc
}

func (w *cancelOnWrite) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cancel()
	return w.buf.Write(p)
}

func (w *cancelOnWrite) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// complete tells whether out is one whole yaml or json document.
func complete(format, out string) bool {
	if format == "json" {
		return json.Valid([]byte(out))
	}
	var v map[string]any
	return yaml.Unmarshal([]byte(out), &v) == nil
}

func TestListCutShortNeverLooksComplete(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	s.createPods(t, "default", 40, nil)
	for _, format := range []string{"yaml", "json"} {
		ctx, cancel := context.WithCancel(context.Background())
		out := &cancelOnWrite{cancel: cancel}
		var errOut bytes.Buffer
		code := Run(ctx, cli.IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: &errOut},
			[]string{"get", "pods", "-o", format, "--chunk-size", "2", s.flag()})
		cancel()
		stdout := out.String()
		if code == 0 || strings.Count(errOut.String(), "\n") != 1 || !strings.HasPrefix(errOut.String(), "error: ") {
			t.Errorf("-o %s: exit %d, stderr %q: want one error line and a non-zero exit", format, code, errOut.String())
		}
		if !strings.Contains(stdout, "pod-00000") {
			t.Errorf("-o %s: the first page was not printed:\n%s", format, stdout)
		}
		if complete(format, stdout) {
			t.Errorf("-o %s: a list cut short parses as a whole document:\n%s", format, stdout)
		}
	}

	// A table is printed page by page as it is read (as kubectl get
	// --watch prints rows), so a list cut short shows the pages read
	// before the cut, never the rest; its error and exit code say it was
	// cut. The cut comes when an unreadable value, after two pages of
	// readable ones, is reported on stderr.
	if _, err := s.client.Put(context.Background(), "/registry/pods/default/pod-00003x", "\x00garbage"); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"table", "wide", "yaml", "json"} {
		ctx, cancel := context.WithCancel(context.Background())
		var out bytes.Buffer
		errOut := &cancelOnWrite{cancel: cancel}
		code := Run(ctx, cli.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: errOut},
			[]string{"get", "pods", "-o", format, "--chunk-size", "2", s.flag()})
		cancel()
		if code == 0 || !strings.Contains(errOut.String(), "pod-00003x") {
			t.Errorf("-o %s: exit %d, stderr %q", format, code, errOut.String())
		}
		if (format == "table" || format == "wide") && (!strings.Contains(out.String(), "pod-00000") || strings.Contains(out.String(), "pod-00039")) {
			t.Errorf("-o %s: want the pages read before the cut, not the rest:\n%s", format, out.String())
		}
		if (format == "yaml" || format == "json") && (complete(format, out.String()) || !strings.Contains(out.String(), "pod-00003")) {
			t.Errorf("-o %s: want the pods read before the cut in a document that does not parse:\n%s", format, out.String())
		}
	}
}

func TestUnreadableValuesStillEndTheList(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	s.createPods(t, "default", 5, nil)
	if _, err := s.client.Put(context.Background(), "/registry/pods/default/pod-00002x", "\x00garbage"); err != nil {
		t.Fatal(err)
	}
	// The walk reaches the end: the document is closed with every readable
	// pod, and the exit code still says something was not read.
	for _, format := range []string{"yaml", "json"} {
		stdout, stderr, code := run(t, "get", "pods", "-o", format, "--chunk-size", "2", s.flag())
		var list struct {
			Kind  string
			Items []any
		}
		if code != 1 || !strings.Contains(stderr, "pod-00002x") {
			t.Errorf("-o %s: exit %d, stderr %q", format, code, stderr)
		}
		if err := yaml.Unmarshal([]byte(stdout), &list); err != nil || list.Kind != "List" || len(list.Items) != 5 {
			t.Errorf("-o %s: want a whole List of 5 pods (%v):\n%s", format, err, stdout)
		}
	}
	stdout, _, code := run(t, "get", "pods", "--chunk-size", "2", s.flag())
	if code != 1 || len(tableLines(stdout)) != 6 {
		t.Errorf("table: exit %d, want the 5 readable pods:\n%s", code, stdout)
	}
}

func TestKeysPrintDocuments(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	s.createPods(t, "shop", 3, nil)
	want := []string{"/registry/pods/shop/pod-00000", "/registry/pods/shop/pod-00001", "/registry/pods/shop/pod-00002"}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"keys", "pods", "-n", "shop", s.flag()}, want},
		{[]string{"keys", "pods", "-n", "shop", "--chunk-size", "2", s.flag()}, want},
		{[]string{"keys", "pods", "-n", "empty", s.flag()}, []string{}},
		{[]string{"keys", "pods/web", "-n", "shop"}, []string{"/registry/pods/shop/web"}},
		{[]string{"keys", "pods", "web", "db", "-n", "shop"}, []string{"/registry/pods/shop/web", "/registry/pods/shop/db"}},
	} {
		for _, format := range []string{"json", "yaml"} {
			stdout, stderr, code := run(t, append(tc.args, "-o", format)...)
			var got []string
			if code != 0 || yaml.Unmarshal([]byte(stdout), &got) != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) || got == nil {
				t.Errorf("%v -o %s: exit %d, stderr %q, stdout %q: want the list %q", tc.args, format, code, stderr, stdout, tc.want)
			}
			if format == "json" && !json.Valid([]byte(stdout)) {
				t.Errorf("%v -o json: not JSON: %q", tc.args, stdout)
			}
		}
	}
	if stdout := mustRun(t, "keys", "pods/web", "-n", "shop"); stdout != "/registry/pods/shop/web\n" {
		t.Errorf("keys pods/web as a table: %q, want the key alone", stdout)
	}
}

func TestNamespaceFlagMustNameANamespace(t *testing.T) {
	t.Parallel()
	manifest := manifestFile(t, webPod)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "pods", "-n", ""}, "`-n` is empty: name a namespace, or use `-A` for all namespaces"},
		{[]string{"get", "pods/web", "-n", "a/b"}, `invalid namespace "a/b" in ` + "`-n`" + `: a lowercase RFC 1123 label must consist of`},
		{[]string{"get", "pods", "-n", "Shop"}, `invalid namespace "Shop"`},
		{[]string{"keys", "-n", ""}, "`-n` is empty: name a namespace, or use `-A`"},
		{[]string{"keys", "pods", "-n", ""}, "`-n` is empty"},
		{[]string{"keys", "pods/web", "-n", "a/b"}, `invalid namespace "a/b"`},
		{[]string{"inspect", "pods/web", "-n", ""}, "`-n` is empty: name a namespace"},
		{[]string{"inspect", "pods/web", "-n", "a/b"}, `invalid namespace "a/b"`},
		{[]string{"delete", "pods/web", "-n", ""}, "`-n` is empty: name a namespace, or use `-A`"},
		{[]string{"delete", "pods/web", "-n", "a/b"}, `invalid namespace "a/b"`},
		{[]string{"create", "-f", manifest, "-n", ""}, "`-n` is empty: name a namespace"},
		{[]string{"create", "-f", manifest, "-n", "a/b"}, `invalid namespace "a/b"`},
		{[]string{"replace", "-f", manifest, "-n", ""}, "`-n` is empty: name a namespace"},
		{[]string{"replace", "-f", manifest, "-n", "a/b"}, `invalid namespace "a/b"`},
	} {
		stdout, stderr, code := run(t, tc.args...)
		if code == 0 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q: want one line with %q", tc.args, code, stdout, stderr, tc.want)
		}
		if strings.Contains(stderr, "-A") && (tc.args[0] == "create" || tc.args[0] == "replace" || tc.args[0] == "inspect") {
			t.Errorf("%q offers `-A`, which it does not have: %q", tc.args, stderr)
		}
	}
	// Across all namespaces -n is not used.
	if _, stderr, _ := run(t, "get", "pods", "-A", "-n", ""); !strings.Contains(stderr, "no etcd given") {
		t.Errorf("get pods -A -n '': %q", stderr)
	}
}

func TestKeysRefusesANegativeChunkSize(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"keys", "--chunk-size", "-5"}, {"keys", "pods", "--chunk-size=-1"}} {
		_, stderr, code := run(t, args...)
		if code == 0 || stderr != "error: `--chunk-size` must be 0 (no paging) or more, not "+strings.TrimPrefix(args[len(args)-1], "--chunk-size=")+"\n" {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// runTree runs the command tree with completion.RequireSubcommands applied.
func runTree(t *testing.T, args ...string) (stdout string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root, _ := rootcmd.New(cli.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut})
	completion.RequireSubcommands(root)
	root.SetArgs(args)
	err = root.ExecuteContext(context.Background())
	return out.String(), err
}

func TestGroupCommandsRefuseUnknownSubcommands(t *testing.T) {
	t.Parallel()
	stdout, err := runTree(t, "completion", "tcsh")
	if err == nil || err.Error() != `unknown shell "tcsh" for "regctl completion": use one of bash, fish, powershell, zsh` || stdout != "" {
		t.Errorf("completion tcsh: err %v, stdout %q", err, stdout)
	}
	if stdout, err := runTree(t, "completion"); err != nil || !strings.Contains(stdout, "Available Commands:") {
		t.Errorf("completion alone: err %v, want its help: %q", err, stdout)
	}
	if stdout, err := runTree(t, "completion", "bash"); err != nil || !strings.Contains(stdout, "__start_regctl") {
		t.Errorf("completion bash: err %v", err)
	}
	if _, err := runTree(t, "nope"); err == nil {
		t.Error("an unknown command passed")
	}
}

func TestTablesEscapeTerminalControl(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	s.createPods(t, "default", 1, nil)
	// A status reason is free text that a kubelet (or anyone who can write
	// pods/status) sets; the STATUS column shows it.
	w := s.session(t)
	ctx := stores.RequestContext(context.Background(), handle.Target{Handle: w.Map.Handles["pods/status"], Namespace: "default"})
	obj, err := w.Map.Handles["pods"].Storage.(rest.Getter).Get(ctx, "pod-00000", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod := obj.(*api.Pod)
	pod.Status.Reason = "\x1b[31mEvicted\x1b[0m"
	if _, _, err := w.Map.Handles["pods/status"].Storage.(rest.Updater).Update(ctx, pod.Name, rest.DefaultUpdatedObjectInfo(pod),
		rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	for _, key := range []string{"/registry/pods/default/\x1b[2Jx", "/registry/\x1b]0;owned\x07/x"} {
		if _, err := s.client.Put(context.Background(), key, "x"); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "pods/pod-00000"}, "^[[31mEvicted^[[0m"},
		{[]string{"get", "pods", "-o", "wide"}, "^[[31mEvicted^[[0m"},
		{[]string{"keys", "pods"}, "/registry/pods/default/^[[2Jx"},
		{[]string{"keys"}, "/registry/^[]0;owned\x07/"},
	} {
		stdout, _, _ := run(t, append(tc.args, s.flag())...)
		if strings.Contains(stdout, "\x1b") || !strings.Contains(stdout, tc.want) {
			t.Errorf("%v: want %q and no escape character:\n%q", tc.args, tc.want, stdout)
		}
	}
}

func TestManifestDecodeErrorsNameTheField(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	bad := strings.Replace(webPod, "  containers:\n  - name: c\n    image: busybox\n", "  containers: busybox\n", 1)
	_, stderr, code := run(t, "create", "-f", manifestFile(t, shopNamespace+"---\n"+bad), s.flag())
	if code == 0 || !strings.Contains(stderr, "error: document 2: decoding Pod: spec.containers: expected a list, got a string: nothing was written\n") || strings.Contains(stderr, "Go struct") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestANegativeRequestTimeoutIsRefused(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"routes", "--request-timeout=-1s"}, {"get", "pods", "--request-timeout", "-5m", "--etcd-servers=http://127.0.0.1:1"}} {
		_, stderr, code := run(t, args...)
		if code == 0 || !strings.HasPrefix(stderr, "error: `--request-timeout` must be 0 (no timeout) or more, not -") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
		}
	}
}
