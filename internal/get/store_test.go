package get

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/stores"
	"github.com/regctl/regctl/internal/target"
)

// configMaps builds the map on a real embedded etcd and returns the target
// of config maps in namespace, and a function that creates one in it
// through the server's store.
func configMaps(t *testing.T, namespace string) (stores.Target, func(name string)) {
	t.Helper()
	e, err := etcdview.StartEmbedded(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	opts := storagemap.NewOptions()
	opts.Server.Etcd.StorageConfig.Transport.ServerList = []string{e.ClientURL}
	s, err := storagemap.Open(context.Background(), storagemap.Config{Options: opts, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	h := s.Map.Handles["configmaps"]
	create := func(name string) {
		t.Helper()
		ctx := genericapirequest.WithNamespace(genericapirequest.NewContext(), namespace)
		cm := &api.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
		if _, err := h.Storage.(rest.Creater).Create(ctx, cm, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return stores.Target{Handle: h, Namespace: namespace}, create
}

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
	cms, create := configMaps(t, "shop")
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
