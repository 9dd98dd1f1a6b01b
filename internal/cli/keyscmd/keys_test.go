package keyscmd

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/regctl/regctl/internal/cli/clitest"
	"github.com/regctl/regctl/internal/logs/logstest"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/storagemap"
)

// TestFlags reads keys' flags into its options, and refuses bad ones,
// with no etcd.
func TestFlags(t *testing.T) {
	o, err := clitest.Parse(t, New, 9, "pods", "web", "--check", "-o", "json", "-n", "shop")
	if err != nil {
		t.Fatal(err)
	}
	if !o.Keys.Check || o.Keys.Output != render.JSON || o.Keys.Revision != 9 || strings.Join(o.Args, " ") != "pods web" ||
		o.Keys.Namespace != "shop" || o.ref == nil || o.ref.Resource != "pods" {
		t.Errorf("options %+v, ref %+v", o.Keys, o.ref)
	}
	// The usage of every resource, in one namespace; with the resources
	// that hold no keys.
	o, err = clitest.Parse(t, New, 0, "-n", "shop", "--show-empty")
	if err != nil {
		t.Fatal(err)
	}
	if o.ref != nil || o.Keys.Namespace != "shop" || !o.Keys.ShowEmpty || o.Keys.Output != render.Table {
		t.Errorf("usage options %+v, ref %+v", o.Keys, o.ref)
	}
	// -A is every namespace: no namespace of usage.
	if o, err := clitest.Parse(t, New, 0, "-A"); err != nil || o.Keys.Namespace != "" {
		t.Errorf("-A: %+v, %v", o, err)
	}
	clitest.Refused(t, New, 0, "`--chunk-size` must be 0 (no paging) or more, not -2", "--chunk-size", "-2")
	clitest.Refused(t, New, 0, "`--show-empty` adds the resources that hold no keys to the usage of every resource: name no resource with it", "pods", "--show-empty")
	clitest.Refused(t, New, 0, "valid values are", "-o", "wide")
}

func TestMain(m *testing.M) { logstest.Main(m) }

// TestAnObjectsKeyNeedsNoEtcd: keys decides how its session opens. With
// no etcd named, an object's key comes from the map alone, built on an
// ephemeral etcd; --check reads the key, and asks for the etcd to read.
func TestAnObjectsKeyNeedsNoEtcd(t *testing.T) {
	o, err := clitest.Parse(t, New, 0, "pods/web", "-n", "shop")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	o.IO.Out = &out
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if out.String() != "/registry/pods/shop/web\n" {
		t.Errorf("keys pods/web -n shop printed %q, want the store's key", out.String())
	}
	o, err = clitest.Parse(t, New, 0, "pods/web", "-n", "shop", "--check")
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Run(context.Background()); !errors.Is(err, storagemap.ErrNoEtcd) {
		t.Errorf("keys pods/web --check with no etcd: %v, want %v", err, storagemap.ErrNoEtcd)
	}
}
