package keyscmd

import (
	"strings"
	"testing"

	"github.com/regctl/regctl/internal/cli/clitest"
	"github.com/regctl/regctl/internal/render"
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
