package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/cli/createcmd"
	"github.com/regctl/regctl/internal/cli/deletecmd"
	"github.com/regctl/regctl/internal/cli/diffcmd"
	"github.com/regctl/regctl/internal/cli/getcmd"
	"github.com/regctl/regctl/internal/cli/inspectcmd"
	"github.com/regctl/regctl/internal/cli/keyscmd"
	"github.com/regctl/regctl/internal/cli/migratecmd"
	"github.com/regctl/regctl/internal/cli/replacecmd"
	"github.com/regctl/regctl/internal/cli/scancmd"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
)

// parseFlags runs a command's flag parsing and validation with a runF that
// keeps the options and does nothing: no etcd is named, none is dialed.
// The options are nil when the flags were refused.
func parseFlags[O any](t *testing.T, newCmd func(*cli.Globals, func(context.Context, *O) error) *cobra.Command, revision int64, args ...string) (*O, error) {
	t.Helper()
	g := &cli.Globals{IO: cli.IOStreams{In: &bytes.Buffer{}, Out: io.Discard, ErrOut: io.Discard}, Server: serverflags.NewOptions(), RequestTimeout: 5 * time.Second, Revision: revision}
	var got *O
	cmd := newCmd(g, func(_ context.Context, o *O) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.ExecuteContext(context.Background())
	if err != nil && got != nil {
		t.Fatalf("%v: runF ran though the flags were refused: %v", args, err)
	}
	return got, err
}

// refused checks that args are refused with a message holding want.
func refused[O any](t *testing.T, newCmd func(*cli.Globals, func(context.Context, *O) error) *cobra.Command, revision int64, want string, args ...string) {
	t.Helper()
	if _, err := parseFlags(t, newCmd, revision, args...); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%v: %v, want an error saying %q", args, err, want)
	}
}

// TestFlagsAreReadAndCheckedWithoutEtcd parses each command's flags as a
// user gives them into its options, and refuses bad ones, before anything
// is dialed: the options each command hands to its one library call.
func TestFlagsAreReadAndCheckedWithoutEtcd(t *testing.T) {
	t.Parallel()
	t.Run("get", func(t *testing.T) {
		o, err := parseFlags(t, getcmd.New, 0, "pods", "-n", "shop", "-o", "yaml", "--chunk-size", "7", "-l", "app=web", "--subresource", "status")
		if err != nil {
			t.Fatal(err)
		}
		if o.Namespace != "shop" || !o.NamespaceSet || o.Get.Output != render.YAML || o.Get.ChunkSize != 7 || o.Get.LabelSelector != "app=web" || o.Subresource != "status" || strings.Join(o.Get.Args, " ") != "pods" {
			t.Errorf("options %+v", o)
		}
		refused(t, getcmd.New, 0, "`--chunk-size` must be 0 (no paging) or more, not -1", "pods", "--chunk-size", "-1")
		refused(t, getcmd.New, 5, "`--resource-version` and `--revision` both say where a watch starts", "pods", "-w", "--resource-version", "3")
		refused(t, getcmd.New, 0, "valid values are", "pods", "-o", "toml")
	})
	t.Run("keys", func(t *testing.T) {
		o, err := parseFlags(t, keyscmd.New, 9, "pods", "web", "--check", "-o", "json")
		if err != nil {
			t.Fatal(err)
		}
		if !o.Keys.Check || o.Keys.Output != render.JSON || o.Keys.Revision != 9 || strings.Join(o.Args, " ") != "pods web" {
			t.Errorf("options %+v", o)
		}
		refused(t, keyscmd.New, 0, "`--chunk-size` must be 0 (no paging) or more, not -2", "--chunk-size", "-2")
		if o, err := parseFlags(t, keyscmd.New, 0, "--show-empty"); err != nil || !o.Keys.ShowEmpty {
			t.Errorf("--show-empty: %v", err)
		}
		refused(t, keyscmd.New, 0, "name no resource with it", "pods", "--show-empty")
	})
	t.Run("inspect", func(t *testing.T) {
		o, err := parseFlags(t, inspectcmd.New, 0, "secrets/db", "-n", "shop", "--history", "-o", "json")
		if err != nil {
			t.Fatal(err)
		}
		if !o.Inspect.History || o.Inspect.Output != render.JSON || o.Namespace != "shop" || strings.Join(o.Args, " ") != "secrets/db" {
			t.Errorf("options %+v", o)
		}
	})
	t.Run("scan", func(t *testing.T) {
		o, err := parseFlags(t, scancmd.New, 0, "--only", "encryption,orphans", "--fail-on", "orphans", "--by", "namespace")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(o.Scan.Only, ",") != "encryption,orphans" || strings.Join(o.Scan.FailOn, ",") != "orphans" || o.Scan.By != "namespace" {
			t.Errorf("options %+v", o.Scan)
		}
		refused(t, scancmd.New, 0, `unknown --only value "everything"`, "--only", "everything")
		refused(t, scancmd.New, 0, `unknown --by "group"`, "--by", "group")
		refused(t, scancmd.New, 0, "`--chunk-size` must be 0 (no paging) or more, not -1", "--chunk-size", "-1")
		if o, err := parseFlags(t, scancmd.New, 0, "--chunk-size", "0"); err != nil || o.Scan.ChunkSize != 0 {
			t.Errorf("--chunk-size 0: %+v, %v; want it taken, as get and keys take it", o, err)
		}
	})
	t.Run("create", func(t *testing.T) {
		o, err := parseFlags(t, createcmd.New, 0, "-f", "a.yaml,b.yaml", "--validate=warn", "--field-manager", "ops", "--dry-run", "-o", "name", "-n", "shop")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(o.Filenames, " ") != "a.yaml b.yaml" || string(o.Validation) != metav1.FieldValidationWarn || o.FieldManager != "ops" || !o.DryRun || o.Output != render.Name || !o.NamespaceSet {
			t.Errorf("options %+v", o)
		}
		o, err = parseFlags(t, createcmd.New, 0, "-f", "a.yaml", "--validate")
		if err != nil || string(o.Validation) != metav1.FieldValidationStrict || o.FieldManager != "regctl" {
			t.Errorf("--validate alone: %+v, %v; want strict, and regctl as the field manager", o, err)
		}
		// kubectl's --dry-run values: a dry run with server and client, a
		// write with none.
		for value, want := range map[string]bool{"server": true, "client": true, "none": false} {
			o, err := parseFlags(t, createcmd.New, 0, "-f", "a.yaml", "--dry-run="+value)
			if err != nil || o.DryRun != want {
				t.Errorf("--dry-run=%s: dry run %v, %v; want %v", value, o != nil && o.DryRun, err, want)
			}
		}
		refused(t, createcmd.New, 0, `Invalid dry-run value (later). Must be "none", "server", or "client".`, "-f", "a.yaml", "--dry-run=later")
		refused(t, createcmd.New, 4, "`--revision` is for reads", "-f", "a.yaml")
		refused(t, createcmd.New, 0, "`--field-manager`", "-f", "a.yaml", "--field-manager", strings.Repeat("m", 129))
		refused(t, createcmd.New, 0, "valid values are strict|warn|ignore", "-f", "a.yaml", "--validate=loose")
		refused(t, createcmd.New, 0, "valid values are", "-f", "a.yaml", "-o", "wide")
	})
	t.Run("replace", func(t *testing.T) {
		o, err := parseFlags(t, replacecmd.New, 0, "-f", "-", "--force", "--subresource", "status", "--validate=ignore")
		if err != nil {
			t.Fatal(err)
		}
		if !o.Force || o.Subresource != "status" || string(o.Validation) != metav1.FieldValidationIgnore || strings.Join(o.Filenames, " ") != "-" {
			t.Errorf("options %+v", o)
		}
	})
	t.Run("delete", func(t *testing.T) {
		o, err := parseFlags(t, deletecmd.New, 0, "pods", "-l", "app=batch", "-A", "--grace-period", "0", "--ignore-not-found")
		if err != nil {
			t.Fatal(err)
		}
		if o.Delete.LabelSelector != "app=batch" || !o.AllNamespaces || o.Delete.GracePeriod != 0 || !o.Delete.IgnoreNotFound || strings.Join(o.Args, " ") != "pods" {
			t.Errorf("options %+v", o)
		}
		refused(t, deletecmd.New, 2, "`--revision` is for reads", "pods/web")
		if o, err := parseFlags(t, deletecmd.New, 0, "pods/web", "--dry-run=server"); err != nil || !o.DryRun {
			t.Errorf("--dry-run=server: %+v, %v; want a dry run", o, err)
		}
	})
	t.Run("diff", func(t *testing.T) {
		// A side that names no point in time is refused before any etcd
		// is looked for, as trouble (exit 2).
		refused(t, diffcmd.New, 0, `"rev:x" names no revision`, "--from", "rev:x")
		refused(t, diffcmd.New, 0, "an empty source", "--from", "rev:3", "--to", "")
		var trouble *cli.ExitError
		if _, err := parseFlags(t, diffcmd.New, 0, "--from", "rev:x"); !errors.As(err, &trouble) || trouble.Code != 2 {
			t.Errorf("a bad --from: %v, want it to exit 2", err)
		}
		if o, err := parseFlags(t, diffcmd.New, 0, "--from", "rev:3", "configmaps", "-n", "shop"); err != nil || o.From != "rev:3" || o.To != "live" || !o.NamespaceSet {
			t.Errorf("diff --from: %+v, %v", o, err)
		}
	})
	t.Run("migrate", func(t *testing.T) {
		if o, err := parseFlags(t, migratecmd.New, 0, "--dry-run=server"); err != nil || !o.Migrate.DryRun {
			t.Errorf("--dry-run=server: %+v, %v; want a dry run", o, err)
		}
		refused(t, migratecmd.New, 0, "Invalid dry-run value", "--dry-run=later")
		refused(t, migratecmd.New, 0, "`--chunk-size` must be 0 (no paging) or more, not -3", "--chunk-size", "-3")
	})
}
