package scancmd

import (
	"strings"
	"testing"

	"github.com/regctl/regctl/internal/cli/clitest"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/scan"
)

// TestFlags reads scan's flags into its request, and refuses bad ones,
// with no etcd.
func TestFlags(t *testing.T) {
	o, err := clitest.Parse(t, New, 7, "--only", "encryption,orphans", "--fail-on", "orphans", "--by", "namespace", "-o", "wide")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(o.Scan.Only, ",") != "encryption,orphans" || strings.Join(o.Scan.FailOn, ",") != "orphans" || o.Scan.By != "namespace" ||
		o.Scan.Output != render.Wide || o.Scan.Revision != 7 || o.Scan.ChunkSize != scan.DefaultPageSize {
		t.Errorf("request %+v", o.Scan)
	}
	if o, err := clitest.Parse(t, New, 0, "--chunk-size", "0"); err != nil || o.Scan.ChunkSize != 0 {
		t.Errorf("--chunk-size 0: %+v, %v; want it taken, as get and keys take it", o, err)
	}
	clitest.Refused(t, New, 0, `unknown --only value "everything"`, "--only", "everything")
	clitest.Refused(t, New, 0, `unknown --fail-on value "keys"`, "--fail-on", "keys")
	clitest.Refused(t, New, 0, `unknown --by "group"`, "--by", "group")
	clitest.Refused(t, New, 0, "`--chunk-size` must be 0 (no paging) or more, not -1", "--chunk-size", "-1")
	clitest.Refused(t, New, 0, "valid values are table|wide|yaml|json", "-o", "name")
	clitest.Refused(t, New, 0, "unknown command", "secrets")
}

// TestHelpNamesEveryReason: the help names each kind of finding of the
// encryption section, so that a reason met in a report is found in it.
func TestHelpNamesEveryReason(t *testing.T) {
	help := New(clitest.Globals(0), nil).Long
	for _, reason := range []string{scan.ReasonStaleKey, scan.ReasonPlaintext, scan.ReasonKeyMissing, scan.ReasonKeyMismatch, scan.ReasonUndecryptable, scan.ReasonUndecodable} {
		if !strings.Contains(help, reason) {
			t.Errorf("the help does not name %s", reason)
		}
	}
}
