package rootcmd

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/regctl/regctl/internal/cli"
)

// newRoot is the root command with its output discarded.
func newRoot() (*cobra.Command, *cli.Globals) {
	return New(cli.IOStreams{In: &bytes.Buffer{}, Out: io.Discard, ErrOut: io.Discard})
}

// TestTheBinaryCarriesNoDocGenerator: the reference is written by
// cmd/gendocs, a program of its own; the root command has no hidden
// command for it, and the regctl binary links neither the generator nor
// cobra's doc package.
func TestTheBinaryCarriesNoDocGenerator(t *testing.T) {
	root, _ := newRoot()
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "__gendocs" {
			t.Errorf("the root command has a hidden command %q: regctl's commands are all documented", c.Name())
		}
	}
	// One line per package linked; regctl's own with their directory and
	// Go files, stat'ed below so that go test's cache of this result goes
	// when an import of theirs changes.
	format := `{{.ImportPath}}{{with .Module}}{{if eq .Path "github.com/regctl/regctl"}} {{$.Dir}}{{range $.GoFiles}} {{.}}{{end}}{{end}}{{end}}`
	out, err := exec.Command("go", "list", "-deps", "-f", format, "github.com/regctl/regctl/cmd/regctl").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if pkg := fields[0]; pkg == "github.com/regctl/regctl/internal/docgen" || pkg == "github.com/spf13/cobra/doc" {
			t.Errorf("cmd/regctl links %s: the docs generator belongs to cmd/gendocs", pkg)
		}
		for _, f := range fields[min(2, len(fields)):] {
			if _, err := os.Stat(filepath.Join(fields[1], f)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// execute runs the root command on args and returns its error.
func execute(args ...string) error {
	root, _ := newRoot()
	root.SetArgs(args)
	return root.ExecuteContext(context.Background())
}

// TestTimesAreToldForTheCommandsThatReadAtARevision: a time given to
// --revision is told as a revision for get, keys, inspect, scan and why
// alone; the commands that refuse --revision refuse a time too, before
// anything is dialed (the etcd named does not answer).
func TestTimesAreToldForTheCommandsThatReadAtARevision(t *testing.T) {
	root, _ := newRoot()
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
		{[]string{"routes", "describe", "pods"}, "`--revision` is for get, keys, inspect, scan and why"},
		{[]string{"space"}, "`--revision` is for get, keys, inspect, scan and why"},
		{[]string{"diff", "--from", "rev:3"}, "`--revision` and `--from`: name the revisions with rev:N or rev:TIME"},
		{[]string{"diff", "-f", "a.yaml"}, "`--revision` and `-f`: diff -f compares a manifest with the objects stored now"},
		{[]string{"restore", "--from", "rev:3", "-A"}, "`--revision` and restore: name the revision to restore from with `--from rev:N` or `--from rev:TIME`"},
	} {
		err := execute(append(tc.args, "--revision", "90m", "--etcd-servers", "http://127.0.0.1:1", "--request-timeout", "50ms")...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v --revision 90m: %v; want %q", tc.args, err, tc.want)
		}
	}
	want := `invalid argument "yesterday" for "--revision" flag: give a revision number, an RFC 3339 time (2026-11-29T14:00:00Z) or an age (90m)`
	if err := execute("get", "pods", "--revision", "yesterday"); err == nil || err.Error() != want {
		t.Errorf("--revision yesterday: %v; want %q", err, want)
	}
}

// TestTheSharedFlagsAreCheckedFirst: what the flags every command shares
// cannot mean is refused before the command reads its own options.
func TestTheSharedFlagsAreCheckedFirst(t *testing.T) {
	for want, args := range map[string][]string{
		"`--kubernetes-version-mismatch` is refuse or ignore, not \"warn\"":                     {"routes", "--kubernetes-version-mismatch", "warn"},
		"`--request-timeout` must be 0 (no timeout) or more, not -1s":                           {"routes", "--request-timeout", "-1s"},
		"`--snapshot` and `--etcd-servers` both name an etcd to read: give one":                 {"get", "pods", "--snapshot", "backup.db", "--etcd-servers", "http://127.0.0.1:1"},
		"`--manifest-root` resolves the files of `--apiserver-manifest`: give the manifest too": {"routes", "--manifest-root", "/tmp"},
		"reading the apiserver manifest: open":                                                  {"routes", "--apiserver-manifest", filepath.Join(t.TempDir(), "none.yaml")},
	} {
		if err := execute(args...); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: %v; want %q", args, err, want)
		}
	}
}

// TestEveryNamespaceFlagCompletes: each command that takes -n completes
// it with the namespaces stored, as kubectl does.
func TestEveryNamespaceFlagCompletes(t *testing.T) {
	root, _ := newRoot()
	var with []string
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.LocalFlags().Lookup("namespace") != nil {
			with = append(with, c.Name())
			if _, ok := c.GetFlagCompletionFunc("namespace"); !ok {
				t.Errorf("%s takes -n and does not complete it: cli.CompleteNamespaces", c.CommandPath())
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if len(with) < 9 {
		t.Errorf("the commands that take -n: %v; want every command on objects", with)
	}
}

// TestGlobalFlagsOfOtherPackagesAreDropped: a flag a linked package
// registers on pflag.CommandLine (component-base's --version) is none of
// regctl's once DropGlobalFlags ran.
func TestGlobalFlagsOfOtherPackagesAreDropped(t *testing.T) {
	defer func(saved *pflag.FlagSet) { pflag.CommandLine = saved }(pflag.CommandLine)
	pflag.CommandLine = pflag.NewFlagSet("other", pflag.ContinueOnError)
	pflag.CommandLine.Bool("version", false, "print the version and quit")
	if err := execute("version", "--version"); err != nil {
		t.Fatalf("the flag registered is not served without DropGlobalFlags: %v", err)
	}
	DropGlobalFlags()
	if err := execute("version", "--version"); err == nil || err.Error() != "unknown flag: --version" {
		t.Errorf("version --version after DropGlobalFlags: %v, want it unknown", err)
	}
}
