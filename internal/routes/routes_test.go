package routes

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/routetable"
)

// committed is a route table of a default server, as docs/routes keeps it:
// the newest release's, a real table to diff, whichever release this
// build is of (the tests here need no map).
var committed = func() string {
	files, _ := filepath.Glob("../../docs/routes/v*.yaml")
	release := func(f string) *version.Version {
		return version.MustParseGeneric(strings.TrimSuffix(filepath.Base(f), ".yaml"))
	}
	return slices.MaxFunc(files, func(a, b string) int {
		c, _ := release(a).Compare(release(b).String())
		return c
	})
}()

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
func writeTable(t *testing.T, name string, tab any) string {
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
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// httpTable is a small HTTP route table: two core routes, one of apps.
func httpTable() routetable.HTTPRouteTable {
	pod := routetable.HTTPRoute{Method: "GET", Path: "/api/v1/namespaces/{namespace}/pods/{name}", Action: "get", Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true, Storage: "*storage.REST"}
	status := pod
	status.Path, status.Resource = pod.Path+"/status", "pods/status"
	deploy := routetable.HTTPRoute{Method: "GET", Path: "/apis/apps/v1/watch/deployments", Action: "watchlist", Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true, Storage: "*storage.REST"}
	return routetable.HTTPRouteTable{Kind: routetable.HTTPKind, FormatVersion: routetable.HTTPFormatVersion, KubernetesVersion: "v1.36.3",
		Routes: []routetable.HTTPRoute{pod, status, deploy}}
}

// live stands for the map: the committed table and httpTable, counting
// how often it is built and released.
type live struct {
	table          routetable.RouteTable
	opened, closed int
}

func (l *live) open(context.Context) (*Live, error) {
	l.opened++
	return &Live{
		Table:      l.table,
		HTTPRoutes: func() (routetable.HTTPRouteTable, error) { return httpTable(), nil },
		Close:      func() error { l.closed++; return nil },
	}, nil
}

// noLive is Open for a diff of files: it must not build the map.
func noLive(t *testing.T) Open {
	return func(context.Context) (*Live, error) {
		t.Error("the map was built for a diff of files")
		return nil, os.ErrInvalid
	}
}

type streams struct{ out, errOut bytes.Buffer }

func (s *streams) io(stdin string) genericiooptions.IOStreams {
	return genericiooptions.IOStreams{In: strings.NewReader(stdin), Out: &s.out, ErrOut: &s.errOut}
}

func runDiff(t *testing.T, opts DiffOptions, open Open) (stdout string, differ bool, err error) {
	t.Helper()
	var s streams
	differ, err = Diff(context.Background(), s.io(""), opts, open)
	if s.errOut.Len() > 0 {
		t.Errorf("a diff wrote on stderr: %q", s.errOut.String())
	}
	return s.out.String(), differ, err
}

// TestDiffEveryField changes each field the document has, one at a
// time, and checks that the diff reports it, that Ignore and Only apply
// to it and that Informational lists it as such.
func TestDiffEveryField(t *testing.T) {
	// Both sides are json, which reads many times faster than yaml: what
	// is tested is the fields, and reading yaml is tested on its own.
	oldPath := writeTable(t, "old.json", readTable(t, committed))
	for _, name := range routetable.Fields() {
		t.Run(name, func(t *testing.T) {
			edited := readTable(t, oldPath)
			var v reflect.Value
			if f, ok := fieldByTag(reflect.ValueOf(&edited).Elem(), name); ok {
				v = f // a table field
			} else if f, ok := fieldByTag(reflect.ValueOf(&edited.Routes[0]).Elem(), name); ok {
				v = f
			} else {
				t.Fatalf("no field %q in RouteTable or Route", name)
			}
			switch v.Kind() {
			case reflect.String:
				v.SetString(v.String() + "x")
			case reflect.Slice:
				v.Set(reflect.Append(v, reflect.ValueOf("x")))
			case reflect.Map:
				if v.IsNil() {
					v.Set(reflect.MakeMap(v.Type()))
				}
				elem := reflect.ValueOf(true)
				if v.Type().Elem().Kind() == reflect.String {
					elem = reflect.ValueOf("x")
				}
				v.SetMapIndex(reflect.ValueOf("x"), elem)
			default:
				t.Fatalf("field %q is a %s: extend this test", name, v.Kind())
			}
			opts := DiffOptions{Old: oldPath, New: writeTable(t, "new.json", edited), Output: Text}

			stdout, differ, err := runDiff(t, opts, noLive(t))
			if err != nil || !differ {
				t.Fatalf("differ %v, err %v; want a difference", differ, err)
			}
			if !strings.Contains(stdout, "\n"+name+": ") && !strings.Contains(stdout, "\n  "+name+": ") {
				t.Errorf("diff does not name %q:\n%s", name, stdout)
			}

			for _, o := range []DiffOptions{{Ignore: []string{name}}, {Only: []string{otherField(name)}}} {
				o.Old, o.New, o.Output = opts.Old, opts.New, Text
				stdout, differ, err := runDiff(t, o, noLive(t))
				if err != nil || differ || stdout != "" {
					t.Errorf("only %v, ignore %v: differ %v, err %v, stdout %q; want equal and no output", o.Only, o.Ignore, differ, err, stdout)
				}
				o.Informational = true
				stdout, differ, _ = runDiff(t, o, noLive(t))
				if differ || !strings.Contains(stdout, name+": ") || !strings.HasSuffix(stdout, " (informational)\n") {
					t.Errorf("only %v, ignore %v, informational: differ %v, stdout %q; want equal and the change marked informational", o.Only, o.Ignore, differ, stdout)
				}
			}

			opts.Only = []string{name, otherField(name)}
			if stdout, differ, _ := runDiff(t, opts, noLive(t)); !differ || strings.Contains(stdout, "informational") {
				t.Errorf("only %s: differ %v, stdout %q; want a difference", name, differ, stdout)
			}
		})
	}
}

func fieldByTag(v reflect.Value, name string) (reflect.Value, bool) {
	for i := range v.NumField() {
		f := v.Type().Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && tag == "" {
			// An embedded struct's fields are the document's own.
			if inner, ok := fieldByTag(v.Field(i), name); ok {
				return inner, true
			}
		}
		if tag == name {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

func otherField(name string) string {
	if name == "keyPrefix" {
		return "decorator"
	}
	return "keyPrefix"
}

func TestDiffEqualAcrossFormats(t *testing.T) {
	tab := readTable(t, committed)
	asJSON := writeTable(t, "old.json", tab)
	slices.Reverse(tab.Routes)
	reversed := writeTable(t, "reversed.yaml", tab)
	for _, pair := range [][2]string{{committed, asJSON}, {asJSON, committed}, {committed, reversed}, {committed, committed}} {
		stdout, differ, err := runDiff(t, DiffOptions{Old: pair[0], New: pair[1], Output: Text}, noLive(t))
		if err != nil || differ || stdout != "" {
			t.Errorf("diff %s %s: differ %v, err %v, stdout %q; want equal and no output", pair[0], pair[1], differ, err, stdout)
		}
	}
	// Equal tables still give a document, so scripts can always parse it.
	stdout, _, err := runDiff(t, DiffOptions{Old: committed, New: asJSON, Output: render.JSON}, noLive(t))
	var res routetable.Result
	if err != nil || json.Unmarshal([]byte(stdout), &res) != nil || !res.Equal || res.Old != committed || res.New != asJSON {
		t.Errorf("json of equal tables: %v, %q", err, stdout)
	}
}

func TestDiffAddedAndRemovedAlwaysCount(t *testing.T) {
	tab := readTable(t, committed)
	added := tab.Routes[len(tab.Routes)-1]
	added.Path = "secrets/extra"
	removed := tab.Routes[0].Path
	tab.Routes = append(tab.Routes[1:], added)
	newPath := writeTable(t, "new.yaml", tab)
	stdout, differ, err := runDiff(t, DiffOptions{Old: committed, New: newPath, Only: []string{"keyPrefix"}, Output: Text}, noLive(t))
	want := "--- " + committed + "\n+++ " + newPath + "\nadded: secrets/extra\nremoved: " + removed + "\n"
	if err != nil || !differ || stdout != want {
		t.Errorf("differ %v, err %v, stdout %q; want a difference and %q", differ, err, stdout, want)
	}
}

// TestDiffLive: the live side is built once at most, of the other side's
// kind, only once the files are read and sound, and released.
func TestDiffLive(t *testing.T) {
	l := &live{table: readTable(t, committed)}
	if stdout, differ, err := runDiff(t, DiffOptions{Old: LiveSide, New: LiveSide, Output: Text}, l.open); err != nil || differ || stdout != "" {
		t.Errorf("live against live: differ %v, err %v, stdout %q", differ, err, stdout)
	}
	if l.opened != 1 || l.closed != 1 {
		t.Errorf("live against live: built %d times, released %d; want once", l.opened, l.closed)
	}

	tab := readTable(t, committed)
	tab.Routes = tab.Routes[1:]
	fewer := writeTable(t, "fewer.yaml", tab)
	stdout, differ, err := runDiff(t, DiffOptions{Old: fewer, New: LiveSide, Output: Text}, l.open)
	if want := "--- " + fewer + "\n+++ live\nadded: " + l.table.Routes[0].Path + "\n"; err != nil || !differ || stdout != want {
		t.Errorf("file against live: differ %v, err %v, stdout %q; want %q", differ, err, stdout, want)
	}

	// An HTTP route table makes the live side the HTTP routes.
	h := httpTable()
	h.Routes = h.Routes[:2]
	httpPath := writeTable(t, "http.yaml", h)
	stdout, differ, err = runDiff(t, DiffOptions{Old: httpPath, New: LiveSide, Output: Text}, l.open)
	if want := "--- " + httpPath + "\n+++ live\nadded: GET /apis/apps/v1/watch/deployments\n"; err != nil || !differ || stdout != want {
		t.Errorf("HTTP file against live: differ %v, err %v, stdout %q; want %q", differ, err, stdout, want)
	}
	if _, differ, err = runDiff(t, DiffOptions{Old: httpPath, New: LiveSide, Groups: []string{"core"}, Output: Text}, l.open); err != nil || differ {
		t.Errorf("HTTP file against live, core group: differ %v, err %v; want equal", differ, err)
	}

	// Trouble in the files, the fields or the kinds is found first.
	opened := l.opened
	for _, tc := range []struct {
		opts DiffOptions
		want string
	}{
		{DiffOptions{Old: "-", New: "-"}, "stdin can be only one side of the diff"},
		{DiffOptions{Old: filepath.Join(t.TempDir(), "missing.yaml"), New: LiveSide}, "reading route table: open "},
		{DiffOptions{Old: committed, New: LiveSide, Only: []string{"colour"}}, "unknown field \"colour\" in `--only`"},
		{DiffOptions{Old: httpPath, New: LiveSide, Ignore: []string{"keyPrefix"}}, "unknown field \"keyPrefix\" in `--ignore`: valid fields are kubernetesVersion,emulatedVersion,featureGates,action,"},
		{DiffOptions{Old: httpPath, New: committed}, httpPath + " is an HTTP route table and " + committed + " a route table: compare two tables of one kind"},
		{DiffOptions{Old: committed, New: LiveSide, http: true}, committed + " is a route table: `--http --check` takes an HTTP route table"},
	} {
		stdout, differ, err := runDiff(t, tc.opts, l.open)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || differ || stdout != "" {
			t.Errorf("%+v: differ %v, err %v, stdout %q; want %q", tc.opts, differ, err, stdout, tc.want)
		}
	}
	if l.opened != opened {
		t.Errorf("the map was built %d times for sides in trouble", l.opened-opened)
	}
	if l.closed != l.opened {
		t.Errorf("built %d times, released %d", l.opened, l.closed)
	}
}

func TestDiffStdin(t *testing.T) {
	doc, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	var s streams
	differ, err := Diff(context.Background(), s.io(string(doc)), DiffOptions{Old: "-", New: committed, Output: Text}, noLive(t))
	if err != nil || differ || s.out.Len() > 0 {
		t.Errorf("the same table on stdin: differ %v, err %v, stdout %q", differ, err, s.out.String())
	}
	_, err = Diff(context.Background(), s.io(""), DiffOptions{Old: committed, New: "-", Output: Text}, noLive(t))
	if err == nil || err.Error() != "reading stdin: it is empty, not a route table" {
		t.Errorf("empty stdin: %v", err)
	}
}

func TestCheck(t *testing.T) {
	l := &live{table: readTable(t, committed)}
	var s streams
	if differ, err := Check(context.Background(), s.io(""), CheckOptions{File: committed}, l.open); err != nil || differ || s.out.Len()+s.errOut.Len() > 0 {
		t.Errorf("up to date: differ %v, err %v, stdout %q, stderr %q", differ, err, s.out.String(), s.errOut.String())
	}

	tab := readTable(t, committed)
	tab.Routes[0].KeyPrefix += "-old"
	stale := writeTable(t, "stale.yaml", tab)
	differ, err := Check(context.Background(), s.io(""), CheckOptions{File: stale}, l.open)
	if want := "--- " + stale + "\n+++ live\nchanged: " + tab.Routes[0].Path + "\n"; err != nil || !differ || !strings.HasPrefix(s.out.String(), want) {
		t.Errorf("stale: differ %v, err %v, stdout %q; want it to start %q", differ, err, s.out.String(), want)
	}
	if want := "hint: if the change is intended, regenerate " + stale + " with `regctl routes -o yaml > " + stale + "` and the same flags\n"; s.errOut.String() != want {
		t.Errorf("stale: stderr %q, want %q", s.errOut.String(), want)
	}

	s = streams{}
	h := httpTable()
	h.Routes[0].Action = "list"
	staleHTTP := writeTable(t, "http.json", h)
	differ, err = Check(context.Background(), s.io(""), CheckOptions{File: staleHTTP, HTTP: true}, l.open)
	if want := "hint: if the change is intended, regenerate " + staleHTTP + " with `regctl routes --http -o yaml > " + staleHTTP + "` and the same flags\n"; err != nil || !differ || s.errOut.String() != want {
		t.Errorf("stale HTTP table: differ %v, err %v, stderr %q; want %q", differ, err, s.errOut.String(), want)
	}
	// Only the stale groups count.
	s = streams{}
	if differ, err := Check(context.Background(), s.io(""), CheckOptions{File: staleHTTP, Groups: []string{"apps"}}, l.open); err != nil || differ || s.errOut.Len() > 0 {
		t.Errorf("apps of a stale HTTP table: differ %v, err %v, stderr %q", differ, err, s.errOut.String())
	}
	// Trouble gives no hint.
	s = streams{}
	if _, err := Check(context.Background(), s.io(""), CheckOptions{File: committed, HTTP: true}, l.open); err == nil || s.errOut.Len() > 0 {
		t.Errorf("a route table as HTTP: err %v, stderr %q", err, s.errOut.String())
	}
}

func TestPrint(t *testing.T) {
	l := &live{table: readTable(t, committed)}
	printSel := func(sel Selection) (string, error) {
		var out bytes.Buffer
		err := Print(context.Background(), &out, render.JSON, sel, l.open)
		return out.String(), err
	}
	out, err := printSel(Selection{Groups: []string{"apps", "core"}})
	var tab routetable.RouteTable
	if err != nil || json.Unmarshal([]byte(out), &tab) != nil || !slices.Equal(tab.Groups(), []string{"core", "apps"}) {
		t.Errorf("apps and core: %v, groups %v", err, tab.Groups())
	}
	out, err = printSel(Selection{HTTP: true, Groups: []string{"core"}, Resources: []string{"pods"}, Verbs: []string{"get"}})
	var h routetable.HTTPRouteTable
	if err != nil || json.Unmarshal([]byte(out), &h) != nil || len(h.Routes) != 2 {
		t.Errorf("HTTP routes to pods: %v, %q", err, out)
	}
	// A group known to the map is known to its HTTP routes, which may have
	// none of it.
	if out, err = printSel(Selection{HTTP: true, Groups: []string{"batch"}}); err != nil || json.Unmarshal([]byte(out), &h) != nil || len(h.Routes) != 0 {
		t.Errorf("HTTP routes of batch: %v, %q", err, out)
	}
	for _, tc := range []struct {
		sel  Selection
		want string
	}{
		{Selection{Groups: []string{"apss"}}, `no API group "apss" in the map: it has core, `},
		{Selection{HTTP: true, Groups: []string{"apss"}}, `no API group "apss" in the map: it has core, `},
		{Selection{HTTP: true, Resources: []string{"pod"}}, `no resource "pod" in the HTTP routes: it has deployments, pods, pods/status`},
		{Selection{HTTP: true, Verbs: []string{"update"}}, `no action "update" in the HTTP routes: it has get, watchlist`},
	} {
		if out, err := printSel(tc.sel); err == nil || !strings.HasPrefix(err.Error(), tc.want) || out != "" {
			t.Errorf("%+v: %v, %q; want %q", tc.sel, err, out, tc.want)
		}
	}
	if l.closed != l.opened {
		t.Errorf("built %d times, released %d", l.opened, l.closed)
	}
}

func TestDiffArgs(t *testing.T) {
	for n, want := range map[int]string{
		0: "want two route tables, OLD and NEW, got 0 arguments",
		1: "want two route tables, OLD and NEW, got 1 argument",
		2: "",
		3: "want two route tables, OLD and NEW, got 3 arguments",
	} {
		err := DiffArgs(make([]string, n))
		if got := fmt.Sprint(err); (err == nil) != (want == "") || err != nil && got != want {
			t.Errorf("%d arguments: %v, want %q", n, err, want)
		}
	}
}
