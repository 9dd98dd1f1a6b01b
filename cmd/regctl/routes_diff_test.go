package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/cli/routescmd"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/routes"
	"github.com/regctl/regctl/internal/routetable"
)

const (
	diffOld = "testdata/routes-diff-old.yaml"
	diffNew = "testdata/routes-diff-new.json"
)

var committed = committedTable()

// readTable loads a route table the way the command does.
func readTable(t *testing.T, path string) routetable.RouteTable {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tab, err := routetable.Load(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// writeTable writes tab as yaml, or json when name ends in .json, into a
// temporary directory and returns its path.
func writeTable(t *testing.T, name string, tab routetable.RouteTable) string {
	t.Helper()
	var b []byte
	var err error
	if strings.HasSuffix(name, ".json") {
		b, err = json.MarshalIndent(tab, "", "  ")
	} else {
		b, err = yaml.Marshal(tab)
	}
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, name, string(b))
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runStdin is run with stdin.
func runStdin(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Run(context.Background(), cli.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut}, args)
	return out.String(), errOut.String(), code
}

func TestRoutesDiffGolden(t *testing.T) {
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"routes-diff.txt", nil},
		{"routes-diff.json", []string{"-o", "json"}},
		{"routes-diff-only.txt", []string{"--only", "keyPrefix,storageVersion"}},
		{"routes-diff-ignore-v.txt", []string{"--ignore", "kubernetesVersion,verbs,storageVersionHash", "-v", "1"}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			stdout, stderr, code := run(t, append([]string{"routes", "diff", diffOld, diffNew}, tc.args...)...)
			if code != 1 || stderr != "" {
				t.Fatalf("exit %d, stderr %q; want 1 and nothing", code, stderr)
			}
			golden(t, tc.golden, stdout)
		})
	}
}

func TestRoutesDiffJSONIsTheResult(t *testing.T) {
	t.Parallel()
	stdout, _, code := run(t, "routes", "diff", diffOld, diffNew, "-o", "json")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	var got routetable.Result
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("decoding the json diff: %v", err)
	}
	if got.Equal || got.Old != diffOld || got.New != diffNew {
		t.Errorf("equal %v, old %q, new %q", got.Equal, got.Old, got.New)
	}
	var paths []string
	for _, c := range got.Changed {
		paths = append(paths, c.Path)
	}
	if want := []string{"configmaps", "events", "nodes", "pods", "secrets"}; !slices.Equal(paths, want) {
		t.Errorf("changed %v, want %v", paths, want)
	}
	if len(got.Added) != 1 || got.Added[0].Path != "pods/resize" || got.Added[0].SharesWith != "pods" {
		t.Errorf("added %+v, want pods/resize with its record", got.Added)
	}
	if len(got.Removed) != 1 || got.Removed[0].Path != "componentstatuses" {
		t.Errorf("removed %+v, want componentstatuses", got.Removed)
	}

	// Equal tables still give a document, so scripts can always parse it.
	stdout, _, code = run(t, "routes", "diff", diffOld, diffOld, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || !got.Equal {
		t.Errorf("equal tables: %s (%v)", stdout, err)
	}
}

func TestRoutesDiffStdin(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(diffNew)
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runStdin(t, string(doc), "routes", "diff", diffOld, "-")
	if code != 1 || stderr != "" || !strings.HasPrefix(stdout, "--- "+diffOld+"\n+++ -\n") {
		t.Errorf("exit %d, stderr %q, stdout %q", code, stderr, stdout)
	}
	stdout, stderr, code = runStdin(t, string(doc), "routes", "diff", "-", diffNew)
	if code != 0 || stdout != "" || stderr != "" {
		t.Errorf("same table on stdin: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	_, stderr, code = runStdin(t, "", "routes", "diff", "-", diffNew)
	if code != 2 || stderr != "error: reading stdin: it is empty, not a route table\n" {
		t.Errorf("empty stdin: exit %d, stderr %q", code, stderr)
	}
}

func TestRoutesDiffErrors(t *testing.T) {
	t.Parallel()
	valid, err := os.ReadFile(diffNew)
	if err != nil {
		t.Fatal(err)
	}
	empty := writeFile(t, "empty.yaml", "")
	random := writeFile(t, "random.yaml", "apiVersion: v1\nkind: ConfigMap\ndata:\n  a: b\n")
	truncated := writeFile(t, "truncated.json", string(valid[:len(valid)/3]))
	newer := writeFile(t, "newer.yaml", "formatVersion: 4\nkubernetesVersion: v1.40.0\nroutes: []\nfieldsOfTheFuture: {}\n")
	noVersion := writeFile(t, "noversion.yaml", "kubernetesVersion: v1.36.3\netcdPrefix: /registry\nroutes: []\n")
	missing := filepath.Join(t.TempDir(), "missing.yaml")

	for _, tc := range []struct {
		name string
		args []string
		want string // stderr, after "error: "
	}{
		{"empty file", []string{empty, diffOld}, "reading " + empty + ": it is empty, not a route table"},
		{"random yaml", []string{diffOld, random}, "reading " + random + `: not a route table: it has no "routes"`},
		{"truncated json", []string{diffOld, truncated}, "reading " + truncated + ": not a route table: "},
		{"newer format", []string{newer, diffOld}, "reading " + newer + ": the table was written by a newer regctl (format version 4, this regctl reads up to 3): upgrade regctl"},
		{"no format version", []string{diffOld, noVersion}, "reading " + noVersion + `: not a route table: it has no "formatVersion"`},
		{"missing file", []string{missing, diffOld}, "reading route table: open " + missing + ": no such file or directory"},
		{"unknown field", []string{diffOld, diffNew, "--only", "keyPrefix,colour"}, "unknown field \"colour\" in `--only`: valid fields are kubernetesVersion,emulatedVersion,featureGates,etcdPrefix,resource,"},
		{"unknown ignored field", []string{diffOld, diffNew, "--ignore", "path"}, "unknown field \"path\" in `--ignore`: valid fields are "},
		{"one argument", []string{diffOld}, "want two route tables, OLD and NEW, got 1"},
		{"three arguments", []string{diffOld, diffNew, diffOld}, "want two route tables, OLD and NEW, got 3"},
		{"unknown flag", []string{diffOld, diffNew, "--colour"}, "unknown flag: --colour"},
		{"unknown format", []string{diffOld, diffNew, "-o", "yaml"}, `unknown output format "yaml": valid values are text|json`},
		{"stdin twice", []string{"-", "-"}, "stdin can be only one side of the diff"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := run(t, append([]string{"routes", "diff"}, tc.args...)...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if !strings.HasPrefix(stderr, "error: "+tc.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr %q, want one line starting %q", stderr, "error: "+tc.want)
			}
		})
	}
}

func TestRoutesDiffLive(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := run(t, "routes", "diff", committed, "live")
	if code != 0 || stdout != "" || stderr != "" {
		t.Errorf("default server: exit %d, stdout %q, stderr %q; want 0 and no output", code, stdout, stderr)
	}
	stdout, stderr, code = run(t, "routes", "diff", committed, "live", "--watch-cache-sizes=secrets#0")
	want := "--- " + committed + "\n+++ live\nchanged: secrets\n  decorator: cacher -> undecorated\n"
	if code != 1 || stdout != want || stderr != "" {
		t.Errorf("watch cache off for secrets: exit %d, stdout %q, stderr %q; want 1 and %q", code, stdout, stderr, want)
	}
	_, stderr, code = run(t, "routes", "diff", "live", committed, "--etcd-servers=http://127.0.0.1:1", "--request-timeout=1s")
	if code != 2 || !strings.HasPrefix(stderr, "error: etcd at http://127.0.0.1:1") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("unreachable etcd: exit %d, stderr %q; want 2 and one error line", code, stderr)
	}
}

func TestRoutesCheck(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := run(t, "routes", "--check", committed)
	if code != 0 || stdout != "" || stderr != "" {
		t.Fatalf("committed table: exit %d, stdout %q, stderr %q; want 0 and no output (regenerate it with `go run ./cmd/regctl routes -o yaml > %s`)", code, stdout, stderr, committed)
	}

	tab := readTable(t, committed)
	for i := range tab.Routes {
		if tab.Routes[i].Path == "secrets" {
			tab.Routes[i].KeyPrefix = "/registry/secrets-old/"
		}
	}
	stale := writeTable(t, "stale.yaml", tab)
	stdout, stderr, code = run(t, "routes", "--check", stale)
	if code != 1 {
		t.Errorf("stale table: exit %d, want 1", code)
	}
	if want := "--- " + stale + "\n+++ live\nchanged: secrets\n  keyPrefix: /registry/secrets-old/ -> /registry/secrets/\n"; stdout != want {
		t.Errorf("stale table: stdout %q, want %q", stdout, want)
	}
	if want := "hint: if the change is intended, regenerate " + stale + " with `regctl routes -o yaml > " + stale + "` and the same flags\n"; stderr != want {
		t.Errorf("stale table: stderr %q, want %q", stderr, want)
	}

	// The committed table is a default server's: flags that change the
	// wiring make it stale.
	_, stderr, code = run(t, "routes", "--check", committed, "--watch-cache=false")
	if code != 1 || !strings.HasPrefix(stderr, "hint: ") {
		t.Errorf("--watch-cache=false: exit %d, stderr %q; want 1 and the hint", code, stderr)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--check", writeFile(t, "empty.yaml", "")}, "error: reading "},
		{[]string{"--check", filepath.Join(t.TempDir(), "missing.yaml")}, "error: reading route table: open "},
		{[]string{"--check", committed, "-o", "json"}, "error: `--check` prints a diff and takes no `-o`"},
	} {
		stdout, stderr, code := run(t, append([]string{"routes"}, tc.args...)...)
		if code != 2 || stdout != "" || !strings.HasPrefix(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and one line starting %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}

// TestCommittedTableIsTheRoutesOutput keeps docs/routes/ byte-for-byte what
// `regctl routes -o yaml` writes, not only equal to it.
func TestCommittedTableIsTheRoutesOutput(t *testing.T) {
	t.Parallel()
	want, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	stdout, _, code := run(t, "routes", "-o", "yaml")
	if code != 0 || stdout != string(want) {
		t.Errorf("%s is not the output of `regctl routes -o yaml`: regenerate it", committed)
	}
}

func TestRoutesDiffFlags(t *testing.T) {
	t.Parallel()
	var got *routescmd.DiffOptions
	cmd := routescmd.NewDiff(&cli.Globals{}, func(_ context.Context, o *routescmd.DiffOptions) error {
		got = o
		return nil
	})
	cmd.SetArgs([]string{"a.yaml", "live", "--only", "keyPrefix,decorator", "--ignore", "verbs", "-o", "json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	want := routes.DiffOptions{Old: "a.yaml", New: "live", Only: []string{"keyPrefix", "decorator"}, Ignore: []string{"verbs"}, Output: render.JSON}
	if got == nil {
		t.Fatal("runF was not called")
	}
	if !reflect.DeepEqual(got.DiffOptions, want) {
		t.Errorf("options %+v, want %+v", got.DiffOptions, want)
	}

	got = nil
	cmd = routescmd.NewDiff(&cli.Globals{}, func(_ context.Context, o *routescmd.DiffOptions) error {
		got = o
		return nil
	})
	cmd.SetArgs([]string{"a.yaml", "b.yaml"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Output != routes.Text || got.Only != nil || got.Ignore != nil {
		t.Errorf("options %+v, want text output and every field counted", got)
	}
}

func TestRoutesCheckFlag(t *testing.T) {
	t.Parallel()
	var got *routescmd.Options
	cmd := routescmd.New(&cli.Globals{}, func(_ context.Context, o *routescmd.Options) error {
		got = o
		return nil
	})
	cmd.SetArgs([]string{"--check", "table.yaml"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Check != "table.yaml" || got.Output != render.Table {
		t.Fatalf("options %+v, want check table.yaml", got)
	}
}
