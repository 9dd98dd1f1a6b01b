package inspectcmd

import (
	"strings"
	"testing"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/cli/clitest"
	"github.com/regctl/regctl/internal/render"
)

// TestFlags reads inspect's flags into its options and refuses what names
// no one object, or asks for a history at a revision, with no etcd.
func TestFlags(t *testing.T) {
	o, err := clitest.Parse(t, New, 0, "secrets/db", "-n", "shop", "--history", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if !o.Inspect.History || o.Inspect.Output != render.JSON || o.Namespace != "shop" || strings.Join(o.Args, " ") != "secrets/db" {
		t.Errorf("options %+v", o)
	}
	if o, err := clitest.Parse(t, New, 9, "configmaps/app"); err != nil || o.Inspect.Revision != 9 || o.ref.Names[0] != "app" {
		t.Errorf("--revision 9: %+v, %v", o, err)
	}
	if !cli.ReadsAt(New(clitest.Globals(0), nil)) {
		t.Error("inspect is not marked as reading at --revision: a time given to it would not be told")
	}
	clitest.Refused(t, New, 9, "`--history` lists every revision held: drop `--revision`", "configmaps/app", "--history")
	clitest.Refused(t, New, 0, "name exactly one object", "configmaps")
	clitest.Refused(t, New, 0, "valid values are table|yaml|json", "configmaps/app", "-o", "wide")
}
