package replacecmd

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

// TestFlags reads replace's flags into its options, and refuses bad ones,
// before anything is dialed.
func TestFlags(t *testing.T) {
	o, err := clitest.Parse(t, New, 0, "-f", "-", "--force", "--subresource", "status", "--validate=ignore", "--drop-unknown-fields", "-o", "yaml", "--field-manager", "kubelet")
	if err != nil {
		t.Fatal(err)
	}
	if !o.Force || o.Subresource != "status" || string(o.Validation) != metav1.FieldValidationIgnore || strings.Join(o.Filenames, " ") != "-" ||
		!o.DropUnknownFields || o.Output != render.YAML || o.FieldManager != "kubelet" || o.DryRun {
		t.Errorf("options %+v", o)
	}
	clitest.Refused(t, New, 3, "`--revision` is for reads", "-f", "a.yaml")
	clitest.RefusedAt(t, New, "2026-11-29T14:00:00Z", "`--revision` is for reads", "-f", "a.yaml")
	clitest.Refused(t, New, 0, "valid values are yaml|json|name", "-f", "a.yaml", "-o", "table")
	clitest.Refused(t, New, 0, `unknown command "configmaps"`, "configmaps", "-f", "a.yaml")
}

// TestRunReplacesThroughTheStore: the manifest's version of a stored
// object is what etcd holds after, said as kubectl says it; with no
// resourceVersion, only with --force.
func TestRunReplacesThroughTheStore(t *testing.T) {
	var out, errOut bytes.Buffer
	g, c := clitest.Etcd(t, &out, &errOut)
	clitest.Put(t, c, "/registry/namespaces/shop", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"shop","uid":"1"}}`)
	clitest.Put(t, c, "/registry/configmaps/shop/app", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app","namespace":"shop","uid":"2"},"data":{"tier":"web"}}`)
	manifest := filepath.Join(t.TempDir(), "app.yaml")
	if err := os.WriteFile(manifest, []byte("{apiVersion: v1, kind: ConfigMap, metadata: {name: app, namespace: shop}, data: {tier: cache}}"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := clitest.ParseOn(t, New, g, "-f", manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "no metadata.resourceVersion: replace needs it as a precondition (or `--force` to use the current one)") || bytes.Contains(clitest.Value(t, c, "/registry/configmaps/shop/app"), []byte("cache")) {
		t.Fatalf("a version with no resourceVersion, without --force: %v; want it refused, unwritten", err)
	}
	out.Reset()
	if o, err = clitest.ParseOn(t, New, g, "-f", manifest, "--force"); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(context.Background()); err != nil {
		t.Fatalf("%v; stderr %q", err, errOut.String())
	}
	if want := "configmap/app replaced\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
	if v := clitest.Value(t, c, "/registry/configmaps/shop/app"); !bytes.Contains(v, []byte("cache")) {
		t.Errorf("etcd holds %q under the config map's key, want the manifest's version", v)
	}
}
