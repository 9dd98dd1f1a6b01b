package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
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
	if want := "NAME   STATUS           RESTARTS\nweb    ^[[31mCrash...   3\n"; out.String() != want {
		t.Errorf("object table:\n%q\nwant\n%q", out.String(), want)
	}
}
