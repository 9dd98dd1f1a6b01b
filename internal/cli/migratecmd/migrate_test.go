package migratecmd

import (
	"testing"

	"github.com/regctl/regctl/internal/cli/clitest"
)

// TestFlags reads migrate's flags into its request, and refuses bad ones
// and any `--revision`, a number or a time, before anything is dialed: a
// write goes to etcd's current revision.
func TestFlags(t *testing.T) {
	o, err := clitest.Parse(t, New, 0, "--dry-run=server")
	if err != nil || !o.Migrate.DryRun || !o.Migrate.Encryption || !o.Migrate.Versions {
		t.Errorf("--dry-run=server: %+v, %v; want a dry run of both kinds", o, err)
	}
	if o, err := clitest.Parse(t, New, 0, "secrets", "--encryption"); err != nil || !o.Migrate.Encryption || o.Migrate.Versions {
		t.Errorf("--encryption alone: %+v, %v", o, err)
	}
	clitest.Refused(t, New, 0, "Invalid dry-run value", "--dry-run=later")
	clitest.Refused(t, New, 0, "`--chunk-size` must be 0 (no paging) or more, not -3", "--chunk-size", "-3")
	clitest.Refused(t, New, 4, "`--revision`", "secrets")
	if _, err := clitest.ParseAt(t, New, "90m", "secrets"); err == nil {
		t.Error("migrate took `--revision 90m`: a write must refuse a time as it refuses a number")
	}
}
