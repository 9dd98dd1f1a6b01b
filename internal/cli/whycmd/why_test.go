package whycmd

import (
	"testing"

	"github.com/regctl/regctl/internal/cli/clitest"
	"github.com/regctl/regctl/internal/render"
)

// TestFlags reads why's flags and its one object, and refuses what names
// none or more than one, with no etcd.
func TestFlags(t *testing.T) {
	o, err := clitest.Parse(t, New, 9, "namespace/shop", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if o.ref.Resource != "namespace" || len(o.ref.Names) != 1 || o.ref.Names[0] != "shop" || o.Why.Output != render.JSON || o.Why.Revision != 9 {
		t.Errorf("options %+v, ref %+v", o.Why, o.ref)
	}
	o, err = clitest.Parse(t, New, 0, "persistentvolumeclaims", "data", "-n", "shop")
	if err != nil {
		t.Fatal(err)
	}
	if o.ref.Resource != "persistentvolumeclaims" || o.ref.Names[0] != "data" || o.Namespace != "shop" || !o.NamespaceSet {
		t.Errorf("TYPE NAME -n: ref %+v, scope %+v", o.ref, o.Scope)
	}
	clitest.Refused(t, New, 0, "name exactly one object", "namespaces")
	clitest.Refused(t, New, 0, "name exactly one object", "pods/a", "pods/b")
	clitest.Refused(t, New, 0, "there is no need to specify a resource type", "pods/status", "web")
	clitest.Refused(t, New, 0, "valid values are table|yaml|json", "namespace/shop", "-o", "wide")
}
