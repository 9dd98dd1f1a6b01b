package deletecmd

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/regctl/regctl/internal/cli/clitest"
	"github.com/regctl/regctl/internal/logs/logstest"
	"github.com/regctl/regctl/internal/render"
)

func TestMain(m *testing.M) { logstest.Main(m) }

// TestFlags reads delete's flags and arguments into its options, and
// refuses what names nothing to delete, before anything is dialed.
func TestFlags(t *testing.T) {
	o, err := clitest.Parse(t, New, 0, "pods", "-l", "app=batch", "-A", "--grace-period", "0", "--ignore-not-found", "-o", "json", "--drop-unknown-fields")
	if err != nil {
		t.Fatal(err)
	}
	if o.Delete.LabelSelector != "app=batch" || !o.AllNamespaces || o.Delete.GracePeriod != 0 || !o.Delete.IgnoreNotFound || strings.Join(o.Args, " ") != "pods" ||
		o.Output != render.JSON || !o.Delete.DropUnknownFields || len(o.refs) != 1 || o.refs[0].Resource != "pods" {
		t.Errorf("options %+v", o)
	}
	o, err = clitest.Parse(t, New, 0, "configmaps/old", "secrets/token", "-n", "shop", "--dry-run=server")
	if err != nil {
		t.Fatal(err)
	}
	if !o.DryRun || o.Namespace != "shop" || !o.NamespaceSet || o.Delete.GracePeriod != -1 || len(o.refs) != 2 || o.refs[1].Resource != "secrets" || o.refs[1].Names[0] != "token" {
		t.Errorf("objects by name: %+v, refs %+v", o, o.refs)
	}
	clitest.Refused(t, New, 2, "`--revision` is for reads", "pods/web")
	clitest.RefusedAt(t, New, "90m", "`--revision` is for reads", "pods/web")
	clitest.Refused(t, New, 0, "name objects or select them with `-l`/`--all`, not both", "pods/web", "--all")
	clitest.Refused(t, New, 0, "name the pods to delete, or pass `-l SELECTOR` or `--all`", "pods")
	clitest.Refused(t, New, 0, "requires at least 1 arg", "-l", "app=web")
	clitest.Refused(t, New, 0, "valid values are yaml|json|name", "pods/web", "-o", "wide")
	g := clitest.Globals(0)
	g.Snapshot = "backup.db"
	if _, err := clitest.ParseOn(t, New, g, "pods/web"); err == nil || !strings.Contains(err.Error(), "backup.db is an etcd snapshot, which regctl only reads") {
		t.Errorf("a delete from a snapshot: %v, want it refused", err)
	}
}

// TestRunDeletesThroughTheStore: the object named is gone from etcd and
// said gone as kubectl says it; a dry run leaves it.
func TestRunDeletesThroughTheStore(t *testing.T) {
	var out, errOut bytes.Buffer
	g, c := clitest.Etcd(t, &out, &errOut)
	const key = "/registry/configmaps/shop/app"
	clitest.Put(t, c, "/registry/namespaces/shop", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"shop","uid":"1"}}`)
	clitest.Put(t, c, key, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app","namespace":"shop","uid":"2"}}`)
	for _, dryRun := range []bool{true, false} {
		args := []string{"configmaps/app", "-n", "shop"}
		if dryRun {
			args = append(args, "--dry-run=server")
		}
		out.Reset()
		o, err := clitest.ParseOn(t, New, g, args...)
		if err != nil {
			t.Fatal(err)
		}
		if err := o.Run(context.Background()); err != nil {
			t.Fatalf("%v: %v; stderr %q", args, err, errOut.String())
		}
		if want := "configmap \"app\" deleted from shop namespace"; !strings.HasPrefix(out.String(), want) {
			t.Errorf("%v: stdout %q, want %q", args, out.String(), want)
		}
		if gone := clitest.Value(t, c, key) == nil; gone == dryRun {
			t.Errorf("%v: the key gone %v", args, gone)
		}
	}
}
