package main

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/cli/clitest"
	"github.com/regctl/regctl/internal/cli/createcmd"
	"github.com/regctl/regctl/internal/cli/deletecmd"
	"github.com/regctl/regctl/internal/cli/diffcmd"
	"github.com/regctl/regctl/internal/cli/replacecmd"
	"github.com/regctl/regctl/internal/cli/rootcmd"
	"github.com/regctl/regctl/internal/render"
)

// TestFlagsAreReadAndCheckedWithoutEtcd parses each command's flags as a
// user gives them into its options, and refuses bad ones, before anything
// is dialed: the options each command hands to its one library call.
func TestFlagsAreReadAndCheckedWithoutEtcd(t *testing.T) {
	t.Parallel()
	t.Run("create", func(t *testing.T) {
		o, err := clitest.Parse(t, createcmd.New, 0, "-f", "a.yaml,b.yaml", "--validate=warn", "--field-manager", "ops", "--dry-run", "-o", "name", "-n", "shop")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(o.Filenames, " ") != "a.yaml b.yaml" || string(o.Validation) != metav1.FieldValidationWarn || o.FieldManager != "ops" || !o.DryRun || o.Output != render.Name || !o.NamespaceSet {
			t.Errorf("options %+v", o)
		}
		o, err = clitest.Parse(t, createcmd.New, 0, "-f", "a.yaml", "--validate")
		if err != nil || string(o.Validation) != metav1.FieldValidationStrict || o.FieldManager != "regctl" {
			t.Errorf("--validate alone: %+v, %v; want strict, and regctl as the field manager", o, err)
		}
		// kubectl's --dry-run values: a dry run with server and client, a
		// write with none.
		for value, want := range map[string]bool{"server": true, "client": true, "none": false} {
			o, err := clitest.Parse(t, createcmd.New, 0, "-f", "a.yaml", "--dry-run="+value)
			if err != nil || o.DryRun != want {
				t.Errorf("--dry-run=%s: dry run %v, %v; want %v", value, o != nil && o.DryRun, err, want)
			}
		}
		clitest.Refused(t, createcmd.New, 0, `Invalid dry-run value (later). Must be "none", "server", or "client".`, "-f", "a.yaml", "--dry-run=later")
		clitest.Refused(t, createcmd.New, 4, "`--revision` is for reads", "-f", "a.yaml")
		clitest.Refused(t, createcmd.New, 0, "`--field-manager`", "-f", "a.yaml", "--field-manager", strings.Repeat("m", 129))
		clitest.Refused(t, createcmd.New, 0, "valid values are strict|warn|ignore", "-f", "a.yaml", "--validate=loose")
		clitest.Refused(t, createcmd.New, 0, "valid values are", "-f", "a.yaml", "-o", "wide")
	})
	t.Run("replace", func(t *testing.T) {
		o, err := clitest.Parse(t, replacecmd.New, 0, "-f", "-", "--force", "--subresource", "status", "--validate=ignore")
		if err != nil {
			t.Fatal(err)
		}
		if !o.Force || o.Subresource != "status" || string(o.Validation) != metav1.FieldValidationIgnore || strings.Join(o.Filenames, " ") != "-" {
			t.Errorf("options %+v", o)
		}
	})
	t.Run("delete", func(t *testing.T) {
		o, err := clitest.Parse(t, deletecmd.New, 0, "pods", "-l", "app=batch", "-A", "--grace-period", "0", "--ignore-not-found")
		if err != nil {
			t.Fatal(err)
		}
		if o.Delete.LabelSelector != "app=batch" || !o.AllNamespaces || o.Delete.GracePeriod != 0 || !o.Delete.IgnoreNotFound || strings.Join(o.Args, " ") != "pods" {
			t.Errorf("options %+v", o)
		}
		clitest.Refused(t, deletecmd.New, 2, "`--revision` is for reads", "pods/web")
		if o, err := clitest.Parse(t, deletecmd.New, 0, "pods/web", "--dry-run=server"); err != nil || !o.DryRun {
			t.Errorf("--dry-run=server: %+v, %v; want a dry run", o, err)
		}
	})
	t.Run("diff", func(t *testing.T) {
		// A side that names no point in time is refused before any etcd
		// is looked for, as trouble (exit 2).
		clitest.Refused(t, diffcmd.New, 0, `"rev:x" names no revision`, "--from", "rev:x")
		clitest.Refused(t, diffcmd.New, 0, "an empty source", "--from", "rev:3", "--to", "")
		var trouble *cli.ExitError
		if _, err := clitest.Parse(t, diffcmd.New, 0, "--from", "rev:x"); !errors.As(err, &trouble) || trouble.Code != 2 {
			t.Errorf("a bad --from: %v, want it to exit 2", err)
		}
		if o, err := clitest.Parse(t, diffcmd.New, 0, "--from", "rev:3", "configmaps", "-n", "shop"); err != nil || o.From != "rev:3" || o.To != "live" || !o.NamespaceSet {
			t.Errorf("diff --from: %+v, %v", o, err)
		}
	})
}

// TestTimesAreToldForTheCommandsThatReadAtARevision: a time given to
// --revision is told as a revision for get, keys, inspect, scan and why alone;
// the commands that refuse --revision refuse a time too, before anything
// is dialed.
func TestTimesAreToldForTheCommandsThatReadAtARevision(t *testing.T) {
	t.Parallel()
	root, _ := rootcmd.New(cli.IOStreams{In: &bytes.Buffer{}, Out: io.Discard, ErrOut: io.Discard})
	var reads []string
	for _, c := range root.Commands() {
		if cli.ReadsAt(c) {
			reads = append(reads, c.Name())
		}
	}
	if got := strings.Join(reads, " "); got != "get inspect keys scan why" {
		t.Errorf("the commands a time is told for: %s, want get inspect keys scan why", got)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "-f", "a.yaml"}, "`--revision` is for reads"},
		{[]string{"replace", "-f", "a.yaml"}, "`--revision` is for reads"},
		{[]string{"delete", "pods/web"}, "`--revision` is for reads"},
		{[]string{"migrate"}, "`--revision` is for reads"},
		{[]string{"routes"}, "`--revision` is for get, keys, inspect, scan and why"},
		{[]string{"space"}, "`--revision` is for get, keys, inspect, scan and why"},
		{[]string{"diff", "--from", "rev:3"}, "`--revision` and `--from`: name the revisions with rev:N or rev:TIME"},
		{[]string{"restore", "--from", "rev:3", "-A"}, "`--revision` and restore: name the revision to restore from with `--from rev:N` or `--from rev:TIME`"},
	} {
		_, stderr, code := run(t, append(tc.args, "--revision", "90m", "--etcd-servers", "http://127.0.0.1:1")...)
		if code == 0 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v --revision 90m: exit %d, %q; want %q", tc.args, code, stderr, tc.want)
		}
	}
	_, stderr, code := run(t, "get", "pods", "--revision", "yesterday")
	if want := "error: invalid argument \"yesterday\" for \"--revision\" flag: give a revision number, an RFC 3339 time (2026-11-29T14:00:00Z) or an age (90m)\n"; code != 1 || stderr != want {
		t.Errorf("--revision yesterday: exit %d, %q; want %q", code, stderr, want)
	}
}
