package restorecmd

import (
	"strings"
	"testing"

	"github.com/regctl/regctl/internal/changes"
	"github.com/regctl/regctl/internal/cli/clitest"
	"github.com/regctl/regctl/internal/render"
)

// TestFlags reads restore's flags into its options, and refuses what it
// cannot do, with no etcd.
func TestFlags(t *testing.T) {
	o, err := clitest.Parse(t, New, 0, "--from", "backup.db", "configmaps/app", "-n", "shop", "-l", "tier=web", "--overwrite", "--dry-run", "-o", "json", "--from-encryption-provider-config", "then.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if o.From != "backup.db" || strings.Join(o.Args, " ") != "configmaps/app" || o.Namespace != "shop" || !o.NamespaceSet || o.Selector != "tier=web" ||
		!o.Overwrite || !o.DryRun || o.Output != render.JSON || o.FromEncryption != "then.yaml" {
		t.Errorf("options %+v", o)
	}
	if o, err := clitest.Parse(t, New, 0, "--from", "rev:3", "-n", "shop"); err != nil || o.Output != render.Table || o.DryRun {
		t.Errorf("the defaults: %+v, %v", o, err)
	}
	// A time is told once the source is opened.
	for _, from := range []string{"rev:90m", "rev:2026-11-29T14:00:00Z"} {
		if o, err := clitest.Parse(t, New, 0, "--from", from, "-n", "shop"); err != nil || o.From != from {
			t.Errorf("--from %s: %+v, %v", from, o, err)
		}
	}
	clitest.RefusedAt(t, New, "90m", "`--revision` and restore: name the revision to restore from with `--from rev:N` or `--from rev:TIME`", "--from", "rev:3", "-A")
	for want, args := range map[string][]string{
		"`--from` names no source":                       {"-n", "shop"},
		`"rev:yesterday" names no revision`:              {"--from", "rev:yesterday", "-A"},
		"`--from live` is what is stored now":            {"--from", "live", "-n", "shop"},
		"name what to restore":                           {"--from", "rev:3"},
		"`-n` and `-A` both given":                       {"--from", "rev:3", "-n", "shop", "-A"},
		`"rev:0" names no revision`:                      {"--from", "rev:0", "-A"},
		`unknown output format "wide"`:                   {"--from", "rev:3", "-A", "-o", "wide"},
		"`--revision` and restore: name the revision to": {"--from", "rev:3", "-A"},
	} {
		revision := int64(0)
		if strings.HasPrefix(want, "`--revision`") {
			revision = 3
		}
		clitest.Refused(t, New, revision, want, args...)
	}
}

// TestSelectionIsWhatTheCommandLineNamed: a source that holds nothing of
// what was named says it as it was typed.
func TestSelectionIsWhatTheCommandLineNamed(t *testing.T) {
	for want, args := range map[string][]string{
		"-n shop":                                       {"--from", "rev:3", "-n", "shop"},
		"configmaps/app -n shop":                        {"--from", "rev:3", "configmaps/app", "-n", "shop"},
		"configmaps app web -A -l tier=web":             {"--from", "rev:3", "configmaps", "app", "web", "-A", "-l", "tier=web"},
		"customresourcedefinitions/widgets.example.com": {"--from", "rev:3", "customresourcedefinitions/widgets.example.com"},
	} {
		o, err := clitest.Parse(t, New, 0, args...)
		if err != nil {
			t.Fatal(err)
		}
		if got := o.selection(); got != want {
			t.Errorf("%v: selection %q, want %q", args, got, want)
		}
	}
}

// TestTheLiveMapServesWhatARestoreLooksUp: the map a restore writes
// through installs, beside the types restored, namespaces (a write looks
// its namespace up), CRDs (a custom resource waits on its CRD) and
// IPAddresses (what holds a cluster IP a service finds taken); it writes
// unless a dry run. The source's map installs the types alone.
func TestTheLiveMapServesWhatARestoreLooksUp(t *testing.T) {
	for _, dryRun := range []bool{false, true} {
		args := []string{"--from", "rev:3", "services", "-n", "shop"}
		if dryRun {
			args = append(args, "--dry-run")
		}
		o, err := clitest.Parse(t, New, 0, args...)
		if err != nil {
			t.Fatal(err)
		}
		sides := o.sessions()
		cfg := o.SessionConfig()
		cfg.Only = "services"
		sides.Configure(live, &cfg)
		if cfg.Only != "services,namespaces,"+crds+","+ipAddresses || cfg.Writes == dryRun {
			t.Errorf("dry run %v: the live map installs %q, writes %v", dryRun, cfg.Only, cfg.Writes)
		}
		source := o.SessionConfig()
		source.Only = "services"
		sides.Configure(changes.Source{Name: "rev:3", Revision: 3}, &source)
		if source.Only != "services" || source.Writes {
			t.Errorf("the source's map installs %q, writes %v", source.Only, source.Writes)
		}
	}
}
