package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/regctl/regctl/internal/render/kubectltest"
)

func pod(name string) runtime.Object {
	return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"}}
}

// parses tells whether out is one complete yaml (or json) document.
func parses(format Format, out string) bool {
	if format == JSON {
		return json.Valid([]byte(out))
	}
	var v map[string]any
	return yaml.Unmarshal([]byte(out), &v) == nil
}

func TestCutListIsNotADocument(t *testing.T) {
	for _, format := range []Format{YAML, JSON} {
		for _, n := range []int{1, 3} {
			var closed, cut bytes.Buffer
			lc, lx := NewListWriter(&closed, format), NewListWriter(&cut, format)
			for i := 0; i < n; i++ {
				if err := lc.Add(pod("p")); err != nil {
					t.Fatal(err)
				}
				if err := lx.Add(pod("p")); err != nil {
					t.Fatal(err)
				}
			}
			if err := lc.Close(); err != nil {
				t.Fatal(err)
			}
			if err := lx.Cut(); err != nil {
				t.Fatal(err)
			}
			if !parses(format, closed.String()) {
				t.Errorf("%s, %d objects: the closed list does not parse:\n%s", format, n, closed.String())
			}
			if parses(format, cut.String()) {
				t.Errorf("%s, %d objects: the cut list parses as a whole document:\n%s", format, n, cut.String())
			}
			printed, ok := strings.CutSuffix(cut.String(), cutMarker)
			if !ok || !strings.HasPrefix(closed.String(), strings.TrimSuffix(printed, "\n")) {
				t.Errorf("%s: the cut list is not the start of the closed one and the marker:\n%s", format, cut.String())
			}
		}
		var empty bytes.Buffer
		if err := NewListWriter(&empty, format).Cut(); err != nil || empty.String() != cutMarker || parses(format, empty.String()) {
			t.Errorf("%s: a list cut before its first object printed %q", format, empty.String())
		}
	}
}

func TestStringListPrintsWhatPrintPrints(t *testing.T) {
	for _, format := range []Format{YAML, JSON} {
		for _, keys := range [][]string{{}, {"/registry/pods/shop/web"}, {"/registry/a", "/registry/b: c", "/registry/\"q\""}} {
			var want, got, cut bytes.Buffer
			if err := Print(&want, format, keys); err != nil {
				t.Fatal(err)
			}
			l, lx := NewStringList(&got, format), NewStringList(&cut, format)
			for _, k := range keys {
				if err := l.Add(k); err != nil {
					t.Fatal(err)
				}
				if err := lx.Add(k); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if err := lx.Cut(); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("%s %q:\n got %q\nwant %q", format, keys, got.String(), want.String())
			}
			var back []string
			if yaml.Unmarshal(cut.Bytes(), &back) == nil {
				t.Errorf("%s %q: the cut list parses: %q", format, keys, cut.String())
			}
		}
	}
	var lines bytes.Buffer
	l := NewStringList(&lines, Table)
	for _, k := range []string{"/registry/a", "/registry/\x1b[31mb"} {
		if err := l.Add(k); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if lines.String() != "/registry/a\n/registry/^[[31mb\n" {
		t.Errorf("table lines %q", lines.String())
	}
}

func TestTablesEscapeTerminalControl(t *testing.T) {
	var out bytes.Buffer
	if err := PrintTable(&out, []string{"KEY", "VALUE"}, [][]string{{"/registry/\x1b]0;owned\x07", "a\x1b[2Jb\rc"}}); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(out.String(), "\x1b\r") || !strings.Contains(out.String(), "/registry/^[]0;owned") || !strings.Contains(out.String(), `a^[[2Jb\rc`) {
		t.Errorf("table %q: want terminal control escaped as kubectl does", out.String())
	}

	table := &ObjectTable{}
	table.Append(&metav1.Table{
		ColumnDefinitions: []metav1.TableColumnDefinition{{Name: "Name"}, {Name: "Status"}, {Name: "Restarts", Type: "integer"}},
		Rows:              []metav1.TableRow{{Cells: []any{"web", "\x1b[31mCrash\nmore", int64(3)}}},
	})
	out.Reset()
	if err := Print(&out, Table, table); err != nil {
		t.Fatal(err)
	}
	// The columns are kubectl's printer's (their widths change between
	// releases): the cell is escaped, cut at its line end, and aligned.
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 || strings.ContainsAny(out.String(), "\x1b\r") || !strings.Contains(lines[1], "^[[31mCrash...") ||
		strings.Index(lines[0], "RESTARTS") != strings.LastIndex(lines[1], "3") {
		t.Errorf("object table:\n%q\nwant the status escaped and cut, the columns aligned", out.String())
	}
}

// kubectlYAMLList is what kubectl get -o yaml prints of several objects:
// the List its printGeneric makes of them (a v1 List of raw items, read
// back as unstructured), printed whole by cli-runtime's YAMLPrinter.
func kubectlYAMLList(t *testing.T, objs []runtime.Object) string {
	t.Helper()
	list := corev1.List{TypeMeta: metav1.TypeMeta{Kind: "List", APIVersion: "v1"}}
	for _, obj := range objs {
		list.Items = append(list.Items, runtime.RawExtension{Object: obj})
	}
	data, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	converted, err := runtime.Decode(unstructured.UnstructuredJSONScheme, data)
	if err != nil {
		t.Fatal(err)
	}
	items, err := meta.ExtractList(converted)
	if err != nil {
		t.Fatal(err)
	}
	whole := &unstructured.UnstructuredList{Object: map[string]any{
		"kind": "List", "apiVersion": "v1", "metadata": map[string]any{"resourceVersion": ""},
	}}
	for _, item := range items {
		whole.Items = append(whole.Items, *item.(*unstructured.Unstructured))
	}
	var out bytes.Buffer
	if err := (&printers.YAMLPrinter{}).PrintObj(whole, &out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func streamedYAMLList(t *testing.T, objs []runtime.Object) string {
	t.Helper()
	var out bytes.Buffer
	l := NewListWriter(&out, YAML)
	for _, obj := range objs {
		if err := l.Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// A streamed yaml List is, byte for byte, what kubectl prints of the whole
// list: long strings folded at the same column, blank lines of block
// scalars left empty.
func TestYAMLListIsKubectls(t *testing.T) {
	long := &schedulingv1.PriorityClass{
		TypeMeta:    metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"},
		ObjectMeta:  metav1.ObjectMeta{Name: "system-node-critical"},
		Value:       2000001000,
		Description: "Used for system critical pods that must not be moved from their current node, whatever else runs there.",
	}
	blank := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "lines", Namespace: "shop"},
		Data:       map[string]string{"text": "a\n\nb\n", "indented": "  x\n\n  y", "long": strings.Repeat("word ", 40)},
	}
	for _, objs := range [][]runtime.Object{{long}, {blank}, {long, blank, pod("web")}} {
		if got, want := streamedYAMLList(t, objs), kubectlYAMLList(t, objs); got != want {
			t.Errorf("streamed yaml list differs from kubectl's:\n%s", kubectltest.FirstDifference(got, want))
		}
	}
	if got, want := streamedYAMLList(t, nil), kubectlYAMLList(t, nil); got != want {
		t.Errorf("empty yaml list %q, kubectl %q", got, want)
	}
}

// Objects of every built-in kind, filled at random, print in a streamed
// yaml List as in kubectl's.
func TestYAMLListIsKubectlsForRandomObjects(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	// Raw JSON as encoding/json writes it: the yaml list writes a raw
	// number as it is written, where kubectl writes the value it read.
	filler := kubectltest.KindFiller(seed, []string{`{"b":[1,{"d":"<x>","c":null}],"a":"` + "\u2028" + `"}`})
	var objs []runtime.Object
	for gvk, typ := range scheme.Scheme.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal || strings.HasSuffix(gvk.Kind, "List") {
			continue
		}
		obj, ok := reflect.New(typ).Interface().(runtime.Object)
		if _, err := meta.Accessor(obj); !ok || err != nil {
			continue // not an object kubectl gets (options, events)
		}
		filler.Fill(obj)
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		// Objects kubectl could not read back as JSON are left out.
		if _, err := json.Marshal(obj); err != nil {
			continue
		}
		objs = append(objs, obj)
		if len(objs) == 20 {
			if got, want := streamedYAMLList(t, objs), kubectlYAMLList(t, objs); got != want && !kubectlOrdersKeysAtRandom(t, objs, got) {
				t.Errorf("streamed yaml list differs from kubectl's:\n%s", kubectltest.FirstDifference(got, want))
			}
			objs = objs[:0]
		}
	}
}

// kubectlOrdersKeysAtRandom tells whether kubectl's own yaml of objs
// orders some mapping's keys at random, and got holds what it holds: go-yaml
// sorts keys by an order that is not total when digits start with 0 (06,
// 6E, 0a), and a map's keys reach its sort in Go's random map order, so
// kubectl prints such keys in no fixed order. Then got and kubectl's yaml
// are compared as the documents they are.
func kubectlOrdersKeysAtRandom(t *testing.T, objs []runtime.Object, got string) bool {
	t.Helper()
	first := kubectlYAMLList(t, objs)
	random := false
	for range 20 {
		if kubectlYAMLList(t, objs) != first {
			random = true
			break
		}
	}
	if !random {
		return false
	}
	var ours, kubectls any
	if err := yaml.Unmarshal([]byte(got), &ours); err != nil {
		t.Fatalf("reading the streamed yaml list: %v", err)
	}
	if err := yaml.Unmarshal([]byte(first), &kubectls); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ours, kubectls) {
		t.Errorf("streamed yaml list holds other content than kubectl's (which orders some keys at random)")
	}
	return true
}

// An error is one line, whatever its message spans: the commands print it
// after "error: ".
func TestOneLine(t *testing.T) {
	err := errors.New("decoding Pod:\n  spec.containers[0]: \tunknown field  \"imagee\"\n")
	if got, want := OneLine(err), `decoding Pod: spec.containers[0]: unknown field "imagee"`; got != want {
		t.Errorf("OneLine = %q, want %q", got, want)
	}
}

func TestFieldsAreAligned(t *testing.T) {
	var b strings.Builder
	if err := Fields(&b, [][2]string{{"regctl", "v1"}, {"kubernetes", "v1.36.3"}}); err != nil {
		t.Fatal(err)
	}
	if want := "regctl:     v1\nkubernetes: v1.36.3\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// streamedJSON is what a ListWriter prints of objs in json.
func streamedJSON(objs []runtime.Object) (string, error) {
	var out bytes.Buffer
	l := NewListWriter(&out, JSON)
	for _, obj := range objs {
		if err := l.Add(obj); err != nil {
			return "", err
		}
	}
	if err := l.Close(); err != nil {
		return "", err
	}
	return out.String(), nil
}

// A streamed json List is, byte for byte, what kubectl get -o json prints
// of the whole list, empty, of one object and of several kinds.
func TestJSONListIsKubectls(t *testing.T) {
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "page", Namespace: "shop"},
		Data:       map[string]string{"index.html": "<html>\n</html>\n"},
	}
	for _, objs := range [][]runtime.Object{nil, {pod("web")}, {pod("web"), cm, pod("db")}} {
		got, err := streamedJSON(objs)
		if err != nil {
			t.Fatal(err)
		}
		want, err := kubectltest.GetJSON(objs)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("streamed json list of %d differs from kubectl's:\n%s", len(objs), kubectltest.FirstDifference(got, want))
		}
	}
}
