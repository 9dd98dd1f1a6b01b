package diffcmd

import (
	"errors"
	"strings"
	"testing"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/cli/clitest"
	"github.com/regctl/regctl/internal/render"
)

// TestPointsInTime reads --from and --to as a diff over time takes them,
// a revision by number or by time, with no etcd; what names no point in
// time is trouble (exit 2).
func TestPointsInTime(t *testing.T) {
	for _, args := range [][]string{
		{"--from", "rev:12"},
		{"--from", "rev:90m", "-n", "shop"},
		{"--from", "rev:2026-11-29T14:00:00Z", "--to", "rev:1h"},
		{"--from", "backup.db", "--to", "rev:2026-11-29T15:00:00+01:00", "configmaps"},
	} {
		o, err := clitest.Parse(t, New, 0, args...)
		if err != nil || o.From != args[1] {
			t.Errorf("%v: %+v, %v", args, o, err)
		}
	}
	// --to is live unless given; TYPE arguments and -n narrow it.
	if o, err := clitest.Parse(t, New, 0, "--from", "rev:3", "configmaps", "-n", "shop"); err != nil || o.To != "live" || strings.Join(o.Args, " ") != "configmaps" || !o.NamespaceSet || o.Output != render.Table {
		t.Errorf("diff --from rev:3 configmaps -n shop: %+v, %v", o, err)
	}
	for want, args := range map[string][]string{
		`"rev:yesterday" names no revision: rev:N takes a revision above 0, rev:TIME an RFC 3339 time (rev:2026-11-29T14:00:00Z) or an age (rev:90m)`: {"--from", "rev:yesterday"},
		`"rev:-5m" names no revision`:                                    {"--from", "rev:3", "--to", "rev:-5m"},
		"an empty source: give live, rev:N, rev:TIME or a snapshot file": {"--from", "rev:3", "--to", ""},
	} {
		_, err := clitest.Parse(t, New, 0, args...)
		var exit *cli.ExitError
		if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.As(err, &exit) || exit.Code != 2 {
			t.Errorf("%v: %v, want trouble saying %q", args, err, want)
		}
	}
	clitest.RefusedAt(t, New, "90m", "`--revision` and `--from`: name the revisions with rev:N or rev:TIME", "--from", "rev:3")
}

// TestAManifestIsDiffedNow: diff -f compares a manifest with what is
// stored now, so `--revision`, a number or a time, is refused saying so
// and where other points in time are named, as trouble (exit 2); never as
// a write, which a diff is not.
func TestAManifestIsDiffedNow(t *testing.T) {
	const want = "`--revision` and `-f`: diff -f compares a manifest with the objects stored now, at etcd's current revision; to compare other points in time, name them with `--from` and `--to` (rev:N, rev:TIME)"
	for _, err := range []error{
		func() error { _, err := clitest.Parse(t, New, 7, "-f", "a.yaml"); return err }(),
		func() error { _, err := clitest.ParseAt(t, New, "90m", "-f", "a.yaml"); return err }(),
	} {
		var exit *cli.ExitError
		if err == nil || err.Error() != want || !errors.As(err, &exit) || exit.Code != 2 {
			t.Errorf("diff -f --revision: %v, want trouble saying %q", err, want)
		}
	}
}

// TestManifestFlags reads diff -f's flags into its own options, with no
// etcd, and refuses what does not go together as trouble (exit 2).
func TestManifestFlags(t *testing.T) {
	o, err := clitest.Parse(t, New, 0, "-f", "a.yaml,b.yaml", "-R", "-n", "shop", "--server-side", "--force-conflicts", "--field-manager", "ops", "--show-secrets", "--show-managed-fields")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(o.Filenames, " ") != "a.yaml b.yaml" || !o.Recursive || o.Namespace != "shop" || !o.NamespaceSet ||
		!o.Diff.ServerSide || !o.Diff.ForceConflicts || o.Diff.FieldManager != "ops" || !o.Diff.ShowSecrets || !o.Diff.ShowManagedFields {
		t.Errorf("options %+v", o)
	}
	if o, err := clitest.Parse(t, New, 0, "-f", "-"); err != nil || o.Namespace != "default" || o.NamespaceSet || o.From != "" {
		t.Errorf("-f -: %+v, %v; want the default namespace, not given", o, err)
	}
	for want, args := range map[string][]string{
		"`-f` names no manifest, and `--from` no point in time: give one of them":            {},
		"`-f` and `--from` both given: diff a manifest, or two points in time":               {"-f", "a.yaml", "--from", "rev:3"},
		"TYPE arguments go with `--from`; a manifest names its own objects":                  {"-f", "a.yaml", "configmaps"},
		"`-n` and `-A` both given: name one namespace, or all":                               {"--from", "rev:3", "-n", "shop", "-A"},
		"--force-conflicts only works with --server-side":                                    {"-f", "a.yaml", "--force-conflicts"},
		"`--server-side` and `--field-manager` say how a manifest merges: they go with `-f`": {"--from", "rev:3", "--server-side"},
		"`--field-manager`: fieldManager: Too long: may not be more than 128 bytes":          {"-f", "a.yaml", "--field-manager", strings.Repeat("m", 129)},
		`unknown output format "toml": valid values are table|yaml|json`:                     {"--from", "rev:3", "-o", "toml"},
	} {
		_, err := clitest.Parse(t, New, 0, args...)
		var exit *cli.ExitError
		if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.As(err, &exit) || exit.Code != 2 {
			t.Errorf("%v: %v, want trouble saying %q", args, err, want)
		}
	}
}
