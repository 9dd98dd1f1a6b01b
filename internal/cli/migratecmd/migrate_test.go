package migratecmd

import (
	"strings"
	"testing"

	"github.com/regctl/regctl/internal/cli/clitest"
	"github.com/regctl/regctl/internal/render"
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

// TestWhatIsMigrated: the types named, comma-separated, and a namespace
// narrow the migration; -n with -A is refused, and so is what cannot
// write: a negative rate, a snapshot.
func TestWhatIsMigrated(t *testing.T) {
	o, err := clitest.Parse(t, New, 0, "secrets,configmaps", "-n", "shop", "--versions", "--keep-stored-versions", "--qps", "20", "--chunk-size", "50", "-o", "json", "--drop-unknown-fields")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(o.Types, " ") != "secrets configmaps" || o.Namespace != "shop" || o.Migrate.Encryption || !o.Migrate.Versions || !o.Migrate.KeepStoredVersions ||
		o.Migrate.QPS != 20 || o.Migrate.ChunkSize != 50 || o.Output != render.JSON || !o.Migrate.DropUnknownFields || o.Migrate.DryRun {
		t.Errorf("options %+v", o)
	}
	if o, err := clitest.Parse(t, New, 0, "-A"); err != nil || o.Namespace != "" || len(o.Types) != 0 || o.Output != render.Table {
		t.Errorf("-A: %+v, %v; want every type in every namespace, as a table", o, err)
	}
	clitest.Refused(t, New, 0, "`-n` and `-A` both given: name one namespace, or all", "-n", "shop", "-A")
	clitest.Refused(t, New, 0, "--qps must not be negative, not -1", "--qps", "-1")
	clitest.Refused(t, New, 0, "valid values are table|yaml|json", "-o", "name")
	clitest.Refused(t, New, 0, "accepts at most 1 arg(s), received 2", "secrets", "configmaps")
	clitest.RefusedAt(t, New, "90m", "`--revision` is for reads", "secrets")
	g := clitest.Globals(0)
	g.Snapshot = "backup.db"
	if _, err := clitest.ParseOn(t, New, g); err == nil || !strings.Contains(err.Error(), "backup.db is an etcd snapshot, which regctl only reads") {
		t.Errorf("a migration of a snapshot: %v, want it refused", err)
	}
}
