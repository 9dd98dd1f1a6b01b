package points

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/regctl/regctl/internal/changes"
	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/logs/logstest"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/target"
)

func TestMain(m *testing.M) { logstest.Main(m) }

// config is the flags' config on an etcd of the test's own.
func config(t *testing.T) storagemap.Config {
	e, err := etcdview.StartEmbedded(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	opts := storagemap.NewOptions()
	opts.Server.Etcd.StorageConfig.Transport.ServerList = []string{e.ClientURL}
	return storagemap.Config{Options: opts, Timeout: 10 * time.Second}
}

// A namespace alone is its namespaced resources and the namespace object,
// named; a revision is checked against the etcd; the same source opens
// one session, and a session opened again has the targets of its new map.
func TestPointsOpenWhatTheCommandNames(t *testing.T) {
	ctx := context.Background()
	d := New(config(t), nil, target.Scope{Namespace: "shop", NamespaceSet: true})
	d.NamespaceAlone = true
	defer d.Close()
	side, targets, err := d.Open(ctx, "live")
	if err != nil {
		t.Fatal(err)
	}
	if !side.Now || side.Revision <= 0 || side.Name != "live" {
		t.Errorf("live side %+v", side)
	}
	var paths []string
	for _, tg := range targets {
		paths = append(paths, tg.Path)
		if tg.Resource.Namespaced && tg.Namespace != "shop" {
			t.Errorf("%s in namespace %q, want shop", tg.Path, tg.Namespace)
		}
		if !tg.Resource.Namespaced && tg.Path != "namespaces" {
			t.Errorf("%s is cluster-scoped: a namespace alone reads none but the namespace", tg.Path)
		}
	}
	if !slices.Contains(paths, "namespaces") || !slices.Contains(paths, "configmaps") || !slices.Equal(d.Names["namespaces"], []string{"shop"}) {
		t.Errorf("targets %v, names %v", paths, d.Names)
	}

	if _, _, err := d.Open(ctx, "rev:1000000"); err == nil || !strings.Contains(err.Error(), "revision 1000000 is in the future") {
		t.Errorf("a revision to come: %v", err)
	}
	live := changes.Source{Name: "live"}
	first := d.Session(live)
	if _, _, err := d.Open(ctx, "live"); err != nil || d.Session(live) != first {
		t.Errorf("live opened twice: %v", err)
	}
	again, s, err := d.Reopen(ctx, live)
	if err != nil || s == first || d.Session(live) != s || len(again) != len(targets) {
		t.Errorf("reopened: %v, %d targets of %d", err, len(again), len(targets))
	}
}
