package rootcmd

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

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
