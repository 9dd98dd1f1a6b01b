package routescmd

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/cli/clitest"
	"github.com/regctl/regctl/internal/logs/logstest"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/routes"
)

func TestMain(m *testing.M) { logstest.Main(m) }

// trouble checks that err is refused as a diff's trouble is: exit 2,
// saying want.
func trouble(t *testing.T, err error, want string) {
	t.Helper()
	var exit *cli.ExitError
	if err == nil || !strings.Contains(err.Error(), want) || !errors.As(err, &exit) || exit.Code != 2 {
		t.Errorf("%v, want trouble (exit 2) saying %q", err, want)
	}
}

// TestFlags reads routes' flags into its options, and refuses what does
// not go together before the map is built: --check's refusals as trouble.
func TestFlags(t *testing.T) {
	o, err := clitest.Parse(t, New, 0, "--http", "--resource", "pods,services", "--verb", "watch", "--api-group", "core,apps", "-o", "wide")
	if err != nil {
		t.Fatal(err)
	}
	if !o.HTTP || !reflect.DeepEqual(o.Resources, []string{"pods", "services"}) || !reflect.DeepEqual(o.Verbs, []string{"watch"}) ||
		!reflect.DeepEqual(o.Groups, []string{"core", "apps"}) || o.Output != render.Wide {
		t.Errorf("options %+v", o)
	}
	if o, err := clitest.Parse(t, New, 0, "--group", "apps", "--check", "routes.yaml"); err != nil || !reflect.DeepEqual(o.Groups, []string{"apps"}) || o.Check != "routes.yaml" || o.Output != render.Table {
		t.Errorf("--group, another name for --api-group, with --check: %+v, %v", o, err)
	}
	clitest.Refused(t, New, 0, "`--resource` and `--verb` filter HTTP routes: add `--http`", "--resource", "pods")
	clitest.Refused(t, New, 7, "`--revision` is for get, keys, inspect, scan and why: routes shows the map the server builds now")
	clitest.RefusedAt(t, New, "90m", "`--revision` is for get, keys, inspect, scan and why")
	clitest.Refused(t, New, 0, "valid values are table|wide|yaml|json", "-o", "name")
	_, err = clitest.Parse(t, New, 0, "--check", "routes.yaml", "-o", "yaml")
	trouble(t, err, "`--check` prints a diff and takes no `-o`")
	_, err = clitest.Parse(t, New, 0, "--check", "routes.yaml", "--http", "--verb", "get")
	trouble(t, err, "`--check` compares whole tables, or groups of them")
}

// TestDiffFlags: routes diff takes two tables, and is trouble (exit 2)
// when it cannot compare them; -v counts the fields that do not count.
func TestDiffFlags(t *testing.T) {
	g := clitest.Globals(0)
	g.Verbosity = 1
	o, err := clitest.ParseOn(t, NewDiff, g, "old.yaml", "live", "--only", "keyPrefix,storageVersion", "--ignore", "decorator", "-o", "json", "--api-group", "apps")
	if err != nil {
		t.Fatal(err)
	}
	if o.Old != "old.yaml" || o.New != "live" || !reflect.DeepEqual(o.Only, []string{"keyPrefix", "storageVersion"}) || !reflect.DeepEqual(o.Ignore, []string{"decorator"}) ||
		o.Output != render.JSON || !reflect.DeepEqual(o.Groups, []string{"apps"}) || !o.Informational {
		t.Errorf("options %+v", o)
	}
	if o, err := clitest.Parse(t, NewDiff, 0, "a.yaml", "b.yaml"); err != nil || o.Output != routes.Text || o.Informational {
		t.Errorf("the defaults: %+v, %v", o, err)
	}
	_, err = clitest.Parse(t, NewDiff, 0, "old.yaml")
	trouble(t, err, "want two route tables, OLD and NEW, got 1 argument")
	_, err = clitest.Parse(t, NewDiff, 0, "a.yaml", "b.yaml", "-o", "yaml")
	trouble(t, err, "valid values are text|json")
	_, err = clitest.Parse(t, NewDiff, 0, "a.yaml", "b.yaml", "--no-such-flag")
	trouble(t, err, "unknown flag: --no-such-flag")
}

// TestRunPrintsChecksAndDiffsTheLiveMap: the table routes prints, built
// by the server's code on an ephemeral etcd, is the one --check and routes
// diff find equal to the live map's; a table changed since is a
// difference (exit 1).
func TestRunPrintsChecksAndDiffsTheLiveMap(t *testing.T) {
	var out bytes.Buffer
	o, err := clitest.Parse(t, New, 0, "--api-group", "core", "-o", "yaml")
	if err != nil {
		t.Fatal(err)
	}
	o.IO.Out = &out
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "keyPrefix: /registry/minions/") {
		t.Fatalf("the core group's table lacks the nodes' key prefix:\n%.500s", out.String())
	}
	dir := t.TempDir()
	table := filepath.Join(dir, "routes.yaml")
	changed := filepath.Join(dir, "changed.yaml")
	if err := os.WriteFile(table, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(changed, bytes.Replace(out.Bytes(), []byte("/registry/minions/"), []byte("/registry/nodes/"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	check, err := clitest.Parse(t, New, 0, "--api-group", "core", "--check", table)
	if err != nil {
		t.Fatal(err)
	}
	check.IO.Out = io.Discard
	if err := check.Run(context.Background()); err != nil {
		t.Errorf("--check of the table just printed: %v", err)
	}
	d, err := clitest.Parse(t, NewDiff, 0, changed, "live", "--api-group", "core")
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	d.IO.Out = &out
	var exit *cli.ExitError
	if err := d.Run(context.Background()); !errors.As(err, &exit) || exit.Code != 1 || !strings.Contains(out.String(), "/registry/nodes/") {
		t.Errorf("routes diff of a changed table with live: %v, stdout %q; want exit 1 and the change", err, out.String())
	}
}
