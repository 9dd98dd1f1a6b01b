package get

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/storagemap/maptest"
	"github.com/regctl/regctl/internal/stores"
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
	rev, err := stores.Revision(context.Background(), cms)
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
