package getcmd

import (
	"strings"
	"testing"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/cli/clitest"
	"github.com/regctl/regctl/internal/render"
)

// TestFlags reads get's flags into its options and refuses bad ones, with
// no etcd; get reads at `--revision`, a time included.
func TestFlags(t *testing.T) {
	o, err := clitest.Parse(t, New, 0, "pods", "-n", "shop", "-o", "yaml", "--chunk-size", "7", "-l", "app=web", "--subresource", "status")
	if err != nil {
		t.Fatal(err)
	}
	if o.Namespace != "shop" || !o.NamespaceSet || o.Get.Output != render.YAML || o.Get.ChunkSize != 7 || o.Get.LabelSelector != "app=web" || o.Subresource != "status" || strings.Join(o.Get.Args, " ") != "pods" {
		t.Errorf("options %+v", o)
	}
	if o, err := clitest.Parse(t, New, 12, "configmaps/app", "-n", "shop"); err != nil || o.Get.Revision != 12 {
		t.Errorf("--revision 12: %+v, %v", o, err)
	}
	if !cli.ReadsAt(New(clitest.Globals(0), nil)) {
		t.Error("get is not marked as reading at --revision: a time given to it would not be told")
	}
	clitest.Refused(t, New, 0, "`--chunk-size` must be 0 (no paging) or more, not -1", "pods", "--chunk-size", "-1")
	clitest.Refused(t, New, 5, "`--resource-version` and `--revision` both say where a watch starts", "pods", "-w", "--resource-version", "3")
	clitest.Refused(t, New, 0, "valid values are", "pods", "-o", "toml")
}
