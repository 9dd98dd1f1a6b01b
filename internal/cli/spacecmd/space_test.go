package spacecmd

import (
	"strings"
	"testing"

	"github.com/regctl/regctl/internal/cli/clitest"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/space"
)

// TestFlags reads space's flags into its request, and refuses bad ones,
// with no etcd.
func TestFlags(t *testing.T) {
	o, err := clitest.Parse(t, New, 0, "--by", "namespace", "--top", "20", "-o", "json", "--chunk-size", "100", "--max-history", "0")
	if err != nil {
		t.Fatal(err)
	}
	if want := (space.Request{Output: render.JSON, By: space.ByNamespace, Top: 20, ChunkSize: 100}); o.Space != want {
		t.Errorf("request %+v, want %+v", o.Space, want)
	}
	o, err = clitest.Parse(t, New, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := (space.Request{Output: render.Table, Top: space.DefaultTop, ChunkSize: space.DefaultPageSize, MaxHistory: space.DefaultMaxHistory}); o.Space != want {
		t.Errorf("defaults %+v, want %+v", o.Space, want)
	}
	if o, err := clitest.Parse(t, New, 0, "--top", "0", "--chunk-size", "0"); err != nil || o.Space.Top != 0 || o.Space.ChunkSize != 0 {
		t.Errorf("--top 0 --chunk-size 0: %+v, %v; want them taken", o, err)
	}
	clitest.Refused(t, New, 0, "unknown `--by` \"resource\": the one value is namespace", "--by", "resource")
	clitest.Refused(t, New, 0, "`--top` must be 0 or more, not -1", "--top", "-1")
	clitest.Refused(t, New, 0, "`--chunk-size` must be 0 (no paging) or more, not -1", "--chunk-size", "-1")
	clitest.Refused(t, New, 0, "`--max-history` must be 0 (no limit) or more, not -1", "--max-history", "-1")
	clitest.Refused(t, New, 0, "valid values are table|yaml|json", "-o", "wide")
	clitest.Refused(t, New, 7, "`--revision` is for get, keys, inspect, scan and why", "--top", "3")
	clitest.Refused(t, New, 0, "unknown command", "pods")
}

// TestHelpLeadsToTheRunbook: the first example is the command alone, and
// the help names the runbook of what to do about what it shows.
func TestHelpLeadsToTheRunbook(t *testing.T) {
	cmd := New(clitest.Globals(0), nil)
	if !strings.HasPrefix(strings.TrimSpace(cmd.Example), "# Where the space went") || !strings.Contains(cmd.Long, "space.md") {
		t.Errorf("example %q, long %q", cmd.Example, cmd.Long)
	}
}
