package get

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/storagemap/maptest"
	"github.com/regctl/regctl/internal/stores/listwatch"
	"github.com/regctl/regctl/internal/target"
)

// run is Run with output as -o gives it, and what it printed on each
// stream.
func run(t *testing.T, named []target.Named, output string, o Options) (out, errOut string, err error) {
	t.Helper()
	o.Print = render.NewGetPrintFlags()
	if o.Output, err = o.Print.Format(output, true, render.Table, render.Name); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	o.Out, o.ErrOut = &stdout, &stderr
	err = Run(context.Background(), named, o)
	return stdout.String(), stderr.String(), err
}

// TestRunOnAStore reads through a real store: named objects, a missing
// one, an empty list, and a list at an earlier revision.
func TestRunOnAStore(t *testing.T) {
	cms, create := maptest.ConfigMaps(t, "shop")
	create("a")
	rev, err := listwatch.Revision(context.Background(), cms)
	if err != nil {
		t.Fatal(err)
	}
	create("b")
	for _, tc := range []struct {
		name              string
		names             []string
		namespace, output string
		o                 Options
		out, errOut       string
		reported          bool
	}{
		{name: "found and missing", names: []string{"a", "nope"}, output: "name",
			out: lines("configmap/a"), errOut: lines(`error: configmaps "nope" not found`), reported: true},
		{name: "missing ignored", names: []string{"a", "nope"}, output: "name", o: Options{IgnoreNotFound: true},
			out: lines("configmap/a")},
		{name: "list", output: "name", out: lines("configmap/a", "configmap/b")},
		{name: "list at a revision", output: "name", o: Options{Revision: mustRevision(t, rev)},
			out: lines("configmap/a")},
		{name: "empty list", namespace: "empty", output: "table",
			errOut: lines("No resources found in empty namespace.")},
		{name: "empty list ignored", namespace: "empty", output: "table", o: Options{IgnoreNotFound: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := cms
			if tc.namespace != "" {
				tg.Namespace = tc.namespace
			}
			out, errOut, err := run(t, []target.Named{{Target: tg, Names: tc.names}}, tc.output, tc.o)
			if out != tc.out || errOut != tc.errOut {
				t.Errorf("printed %q, %q on stderr; want %q, %q", out, errOut, tc.out, tc.errOut)
			}
			if got := errors.Is(err, ErrReported); got != tc.reported || (err != nil && !got) {
				t.Errorf("err %v, want reported: %v", err, tc.reported)
			}
		})
	}
}

func mustRevision(t *testing.T, rv string) int64 {
	t.Helper()
	rev, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

// flushes records what a list printed by the time each page was read.
type flushes struct {
	bytes.Buffer
	writes int
}

func (f *flushes) Write(p []byte) (int, error) {
	f.writes++
	return f.Buffer.Write(p)
}

// listCounted lists tg's objects with o in output, and is what it printed
// and in how many writes.
func listCounted(t *testing.T, tg handle.Target, output string, o Options) (string, int) {
	t.Helper()
	var err error
	if o.Output, err = o.Print.Format(output, true, render.Table, render.Name, render.JSON, render.YAML); err != nil {
		t.Fatal(err)
	}
	var out flushes
	var errOut bytes.Buffer
	o.Out, o.ErrOut = &out, &errOut
	if err := Run(context.Background(), []target.Named{{Target: tg}}, o); err != nil {
		t.Fatal(err)
	}
	return out.String(), out.writes
}

// TestTablesPrintPageByPage: a table of a list read in pages is printed a
// page at a time, as it is read, with its header once and every row lined
// up with the rows before it; with --sort-by, once, whole, and sorted.
func TestTablesPrintPageByPage(t *testing.T) {
	cms, create := maptest.ConfigMaps(t, "shop")
	var names []string
	for i := range 25 {
		name := "cm-" + strconv.Itoa(i)
		if i == 20 {
			// Wider than the rows before it: later rows line up with it.
			name += "-with-a-much-longer-name"
		}
		names = append(names, name)
		create(name)
	}
	list := func(sortBy string) (string, int) {
		o := Options{ChunkSize: 10}
		o.Print = render.NewGetPrintFlags()
		cmd := &cobra.Command{Use: "get"}
		cmd.Flags().StringP("output", "o", "", "")
		o.Print.AddFlags(cmd)
		if sortBy != "" {
			if err := cmd.ParseFlags([]string{"--sort-by", sortBy}); err != nil {
				t.Fatal(err)
			}
		}
		return listCounted(t, cms, "table", o)
	}
	out, writes := list("")
	if writes != 3 {
		t.Errorf("25 rows in pages of 10 written in %d writes, want one a page", writes)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 26 || !strings.HasPrefix(lines[0], "NAME") || strings.Count(out, "NAME") != 1 {
		t.Fatalf("printed %q, want one header and 25 rows", out)
	}
	// The first page lines up with the header; the wide row is in the
	// second (rows come in key order), which lines up with it, and so do
	// the pages after it.
	dataAt := func(line string) int { return strings.Index(line, " 0 ") + 1 }
	header := strings.Index(lines[0], "DATA")
	wide := header
	for _, line := range lines[1:] {
		if strings.HasPrefix(line, names[20]) {
			wide = dataAt(line)
		}
	}
	if wide <= header {
		t.Fatalf("the wide row is not wider than the header: %q", out)
	}
	for i, line := range lines[1:] {
		want := header
		if i >= 10 {
			want = wide
		}
		if at := dataAt(line); at != want {
			t.Errorf("row %d %q: DATA at %d, want %d (header at %d, the wide row's at %d)", i, line, at, want, header, wide)
		}
	}

	sorted, writes := list(".metadata.name")
	if writes != 1 {
		t.Errorf("a sorted table written in %d writes, want 1", writes)
	}
	want := slices.Sorted(slices.Values(names))
	var got []string
	for _, line := range strings.Split(strings.TrimSuffix(sorted, "\n"), "\n")[1:] {
		got = append(got, strings.Fields(line)[0])
	}
	if !slices.Equal(got, want) {
		t.Errorf("sorted rows %q, want %q", got, want)
	}
}

// TestListsWriteAPageAtATime: kubectl's printers write a line at a time;
// a list reaches the output a page at a time, each page whole, as it is
// read.
func TestListsWriteAPageAtATime(t *testing.T) {
	cms, create := maptest.ConfigMaps(t, "shop")
	for i := range 25 {
		create("cm-" + strconv.Itoa(i))
	}
	for _, output := range []string{"name", "json", "yaml"} {
		t.Run(output, func(t *testing.T) {
			out, writes := listCounted(t, cms, output, Options{ChunkSize: 10, Print: render.NewGetPrintFlags()})
			// A write for each page, and the list's end.
			if n := strings.Count(out, "cm-"); n < 25 || writes < 3 || writes > 4 {
				t.Errorf("%d objects in pages of 10 written in %d writes, want 25 in 3 or 4:\n%s", n, writes, out)
			}
		})
	}
}
