package createcmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regctl/regctl/internal/cli/clitest"
	"github.com/regctl/regctl/internal/logs/logstest"
	"github.com/regctl/regctl/internal/render"
)

func TestMain(m *testing.M) { logstest.Main(m) }

// TestFlags reads create's flags into its options, and refuses bad ones,
// before anything is dialed.
func TestFlags(t *testing.T) {
	o, err := clitest.Parse(t, New, 0, "-f", "a.yaml,b.yaml", "-R", "--validate=warn", "--field-manager", "ops", "--dry-run", "-o", "name", "-n", "shop", "--allow-plaintext")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(o.Filenames, " ") != "a.yaml b.yaml" || !o.Recursive || string(o.Validation) != metav1.FieldValidationWarn || o.FieldManager != "ops" ||
		!o.DryRun || o.Output != render.Name || o.Namespace != "shop" || !o.NamespaceSet || !o.AllowPlaintext {
		t.Errorf("options %+v", o)
	}
	o, err = clitest.Parse(t, New, 0, "-f", "a.yaml", "--validate")
	if err != nil || string(o.Validation) != metav1.FieldValidationStrict || o.FieldManager != "regctl" || o.Namespace != "default" || o.NamespaceSet || o.Output != "" {
		t.Errorf("--validate alone: %+v, %v; want strict, regctl as the field manager, the default namespace and a line per write", o, err)
	}
	// kubectl's --dry-run values: a dry run with server and client, a
	// write with none.
	for value, want := range map[string]bool{"server": true, "client": true, "none": false} {
		o, err := clitest.Parse(t, New, 0, "-f", "a.yaml", "--dry-run="+value)
		if err != nil || o.DryRun != want {
			t.Errorf("--dry-run=%s: dry run %v, %v; want %v", value, o != nil && o.DryRun, err, want)
		}
	}
	clitest.Refused(t, New, 0, `Invalid dry-run value (later). Must be "none", "server", or "client".`, "-f", "a.yaml", "--dry-run=later")
	clitest.Refused(t, New, 4, "`--revision` is for reads", "-f", "a.yaml")
	clitest.RefusedAt(t, New, "90m", "`--revision` is for reads", "-f", "a.yaml")
	clitest.Refused(t, New, 0, "`--field-manager`", "-f", "a.yaml", "--field-manager", strings.Repeat("m", 129))
	clitest.Refused(t, New, 0, "valid values are strict|warn|ignore", "-f", "a.yaml", "--validate=loose")
	clitest.Refused(t, New, 0, "valid values are", "-f", "a.yaml", "-o", "wide")
	clitest.Refused(t, New, 0, `unknown command "pods"`, "pods", "-f", "a.yaml")
}

// TestRunCreatesThroughTheStores: the manifest's objects are written to
// etcd under their stores' keys and said as kubectl says them; a dry run
// writes nothing.
func TestRunCreatesThroughTheStores(t *testing.T) {
	var out, errOut bytes.Buffer
	g, c := clitest.Etcd(t, &out, &errOut)
	dir := t.TempDir()
	create := func(name, manifest string, args ...string) {
		t.Helper()
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(manifest), 0o600); err != nil {
			t.Fatal(err)
		}
		out.Reset()
		o, err := clitest.ParseOn(t, New, g, append([]string{"-f", file}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		if err := o.Run(context.Background()); err != nil {
			t.Fatalf("%v: %v; stderr %q", args, err, errOut.String())
		}
	}
	create("shop.yaml", `apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: app, namespace: shop}
data: {tier: web}
`)
	if want := "namespace/shop created\nconfigmap/app created\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
	if v := clitest.Value(t, c, "/registry/configmaps/shop/app"); !bytes.Contains(v, []byte("web")) {
		t.Errorf("etcd holds %q under the config map's key", v)
	}
	create("dry.yaml", "{apiVersion: v1, kind: ConfigMap, metadata: {name: dry}}", "-n", "shop", "--dry-run=server", "-o", "name")
	if out.String() != "configmap/dry\n" || clitest.Value(t, c, "/registry/configmaps/shop/dry") != nil {
		t.Errorf("a dry run: stdout %q, and etcd holds %q", out.String(), clitest.Value(t, c, "/registry/configmaps/shop/dry"))
	}
}
