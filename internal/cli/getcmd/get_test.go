package getcmd

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/cli/clitest"
	"github.com/regctl/regctl/internal/logs/logstest"
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

func TestMain(m *testing.M) { logstest.Main(m) }

// TestArgumentsAreTypesAndNames: Complete reads the arguments as kubectl
// get does, types with names or TYPE/NAME, and refuses what names no type.
func TestArgumentsAreTypesAndNames(t *testing.T) {
	o, err := clitest.Parse(t, New, 0, "pods,services", "web", "-A")
	if err != nil {
		t.Fatal(err)
	}
	if len(o.refs) != 1 || o.refs[0].Resource != "pods,services" || strings.Join(o.refs[0].Names, " ") != "web" || !o.Get.AllNamespaces {
		t.Errorf("refs %+v", o.refs)
	}
	if o, err := clitest.Parse(t, New, 0, "pods/web", "configmaps/app", "--subresource", "status"); err != nil || len(o.refs) != 2 || o.refs[0].Subresource != "status" || o.refs[1].Names[0] != "app" {
		t.Errorf("TYPE/NAME with a subresource: %+v, %v", o, err)
	}
	if o, err := clitest.Parse(t, New, 0, "pods/status", "web"); err != nil || len(o.refs) != 1 || o.refs[0].Subresource != "status" || o.refs[0].Names[0] != "web" {
		t.Errorf("pods/status web: %+v, %v; want the status of pod web", o, err)
	}
	clitest.Refused(t, New, 0, "Required resource not specified.")
	clitest.Refused(t, New, 0, "there is no need to specify a resource type as a separate argument when passing arguments in resource/name form", "pods", "configmaps/app")
	clitest.Refused(t, New, 0, "`--output-watch-events` needs `--watch` or `--watch-only`", "pods", "--output-watch-events")
	g := clitest.Globals(0)
	g.Snapshot = "backup.db"
	if _, err := clitest.ParseOn(t, New, g, "pods", "-w"); err == nil || !strings.Contains(err.Error(), "backup.db is an etcd snapshot, where nothing changes") {
		t.Errorf("a watch of a snapshot: %v, want it refused", err)
	}
}

// TestRunReadsThroughTheStore: what etcd holds is printed as kubectl get
// prints it; an object that is not there is NotFound.
func TestRunReadsThroughTheStore(t *testing.T) {
	var out, errOut bytes.Buffer
	g, c := clitest.Etcd(t, &out, &errOut)
	clitest.Put(t, c, "/registry/configmaps/shop/app", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app","namespace":"shop","uid":"1"}}`)
	o, err := clitest.ParseOn(t, New, g, "configmaps", "-n", "shop", "-o", "name")
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Run(context.Background()); err != nil || out.String() != "configmap/app\n" {
		t.Errorf("get configmaps -n shop -o name: %q, %v", out.String(), err)
	}
	if o, err = clitest.ParseOn(t, New, g, "configmaps/gone", "-n", "shop"); err != nil {
		t.Fatal(err)
	}
	var exit *cli.ExitError
	if err := o.Run(context.Background()); !errors.As(err, &exit) || exit.Code != 1 || !strings.Contains(errOut.String(), `configmaps "gone" not found`) {
		t.Errorf("get configmaps/gone: %v, stderr %q; want exit 1 and NotFound", err, errOut.String())
	}
}
