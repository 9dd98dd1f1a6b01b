package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/cli/routescmd"
	"github.com/regctl/regctl/internal/render"
)

func TestRoutesGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ golden, format string }{
		{"", "yaml"}, // the committed table itself
		{"routes.json", "json"},
		{"routes.txt", "table"},
		{"routes-wide.txt", "wide"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			stdout, stderr, code := run(t, "routes", "-o", tc.format)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if tc.golden == "" {
				goldenFile(t, committedTable(), stdout)
				return
			}
			releaseGolden(t, tc.golden, stdout)
		})
	}
}

func TestRoutesIsDeterministic(t *testing.T) {
	t.Parallel()
	first, _, _ := run(t, "routes", "-o", "yaml")
	second, _, _ := run(t, "routes", "-o", "yaml")
	if first != second {
		t.Fatal("two runs of `routes -o yaml` differ")
	}
	for _, leak := range []string{"127.0.0.1", "regctl-etcd-", "/tmp/"} {
		if strings.Contains(first, leak) {
			t.Errorf("output mentions %q: the ephemeral etcd leaked into the table", leak)
		}
	}
}

func TestRoutesRejectsUnknownFormat(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := run(t, "routes", "-o", "xml")
	if code == 0 {
		t.Fatal("want a non-zero exit for -o xml")
	}
	if stdout != "" {
		t.Errorf("stdout %q, want nothing", stdout)
	}
	if want := "error: unknown output format \"xml\": valid values are table|wide|yaml|json\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
}

func TestRoutesUnreachableEtcd(t *testing.T) {
	t.Parallel()
	start := time.Now()
	stdout, stderr, code := run(t, "routes", "--etcd-servers=http://127.0.0.1:1", "--request-timeout=1s")
	if code == 0 {
		t.Fatal("want a non-zero exit for an unreachable etcd")
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %s: want a fast failure", took)
	}
	if stdout != "" {
		t.Errorf("stdout %q, want nothing", stdout)
	}
	if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "error: etcd at http://127.0.0.1:1") {
		t.Errorf("stderr %q: want exactly one error line naming the etcd (no klog or grpc lines)", stderr)
	}
}

func TestRoutesFlags(t *testing.T) {
	t.Parallel()
	var got *routescmd.Options
	cmd := routescmd.New(&cli.Globals{}, func(_ context.Context, o *routescmd.Options) error {
		got = o
		return nil
	})
	cmd.SetArgs([]string{"-o", "wide"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Output != render.Wide {
		t.Fatalf("options %+v, want output wide", got)
	}
}

func TestRoutesOfSomeGroups(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := run(t, "routes", "--api-group", "apps,core", "-o", "wide")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	apiVersions := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n")[1:] {
		apiVersions[strings.Fields(line)[4]] = true
	}
	if len(apiVersions) != 2 || !apiVersions["v1"] || !apiVersions["apps/v1"] {
		t.Errorf("--api-group apps,core printed API versions %v, want v1 and apps/v1", apiVersions)
	}
	if !strings.Contains(stdout, "\ndeployments.apps/scale ") || !strings.Contains(stdout, "\npods ") {
		t.Errorf("missing deployments.apps/scale or pods:\n%s", stdout)
	}

	// The same groups on both sides of a check.
	_, stderr, code = run(t, "routes", "--group", "apps", "--check", committedTable())
	if code != 0 || stderr != "" {
		t.Errorf("--group apps --check: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = run(t, "routes", "--api-group", "apss")
	if code != 1 || !strings.Contains(stderr, `no API group "apss" in the map`) {
		t.Errorf("unknown group: exit %d, stderr %q", code, stderr)
	}
}

// TestRoutesValidate: flags that do not go together are refused before
// the map is built, --check's with exit status 2 as its other troubles.
func TestRoutesValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args     []string
		revision int64
		code     int
		want     string
	}{
		{[]string{"--check", "t.yaml", "-o", "json"}, 0, 2, "`--check` prints a diff and takes no `-o`: for data, use `regctl routes diff FILE live -o json`"},
		{[]string{"--check", "t.yaml", "--http", "--verb", "get"}, 0, 2, "`--check` compares whole tables, or groups of them: `--resource` and `--verb` are for printing"},
		{[]string{"--check", "t.yaml", "--resource", "pods"}, 0, 1, "`--resource` and `--verb` filter HTTP routes: add `--http`"},
		{[]string{"--check", "t.yaml", "-o", "xml"}, 0, 1, `unknown output format "xml": valid values are table|wide|yaml|json`},
		{[]string{"--check", "t.yaml"}, 3, 1, "`--revision` is for get, keys, inspect, scan and why: routes shows the map the server builds now"},
	} {
		cmd := routescmd.New(&cli.Globals{Revision: tc.revision}, func(context.Context, *routescmd.Options) error {
			t.Errorf("%v: ran", tc.args)
			return nil
		})
		cmd.SetArgs(tc.args)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		err := cmd.Execute()
		code := 1
		var ee *cli.ExitError
		if errors.As(err, &ee) {
			code, err = ee.Code, ee.Err
		}
		if err == nil || err.Error() != tc.want || code != tc.code {
			t.Errorf("%v: exit %d, %v; want %d, %q", tc.args, code, err, tc.code, tc.want)
		}
	}
}

// TestRoutesDescribe prints paths' wiring in the order given, as text
// and as data, and refuses a path the map does not have in one line.
func TestRoutesDescribe(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := run(t, "routes", "describe", "events", "pods/status")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	events, status := strings.Index(stdout, "Path: events\n"), strings.Index(stdout, "Path: pods/status\n")
	if events < 0 || status < events {
		t.Errorf("want events, then pods/status:\n%s", stdout)
	}
	for _, want := range []string{
		"\ngenericregistry.Store:\n",
		"  TTLFunc:",
		"k8s.io/kubernetes/pkg/registry/core/event/storage.NewREST (pkg/registry/core/event/storage/storage.go:",
		"\nstrategy (update, resetFields):\n",
		"  keys:",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("describe lacks %q", want)
		}
	}

	stdout, _, code = run(t, "routes", "describe", "events", "-o", "json")
	var paths []struct {
		Path  string
		Steps []struct{ Step string }
	}
	if err := json.Unmarshal([]byte(stdout), &paths); code != 0 || err != nil || len(paths) != 1 || paths[0].Path != "events" || len(paths[0].Steps) < 8 {
		t.Errorf("-o json: exit %d, %v, %+v", code, err, paths)
	}

	_, stderr, code = run(t, "routes", "describe", "pods", "nosuchthings")
	if code == 0 || stderr != "error: nosuchthings is not a path of the storage map (see `regctl routes`)\n" {
		t.Errorf("an unknown path: exit %d, stderr %q", code, stderr)
	}
}
