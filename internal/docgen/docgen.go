// Package docgen writes regctl's reference documentation, markdown pages and
// man pages, from its command tree with cobra/doc.
package docgen

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// Directories under the docs root that Generate owns: every *.md in
// ReferenceDir and every *.1 in ManDir is generated.
const (
	ReferenceDir = "reference"
	ManDir       = "man"
)

// manDate is the date in the man pages' header. It is fixed so that pages
// change with the command tree, not with the day they were generated.
var manDate = time.Date(2026, time.November, 1, 0, 0, 0, 0, time.UTC)

// Generate writes the markdown reference of root and its commands into
// dir/reference and their man pages into dir/man, replacing the pages there,
// so that a removed command loses its page. The output is byte-stable: no
// generation date, a fixed man page date.
func Generate(root *cobra.Command, dir string) error {
	// The completion and help commands are added when a command tree is
	// executed; the documentation covers them too.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	disableAutoGenTag(root)

	refDir := filepath.Join(dir, ReferenceDir)
	manDir := filepath.Join(dir, ManDir)
	for _, d := range []struct{ path, pattern string }{{refDir, "*.md"}, {manDir, "*.1"}} {
		if err := clean(d.path, d.pattern); err != nil {
			return err
		}
	}
	if err := doc.GenMarkdownTree(root, refDir); err != nil {
		return fmt.Errorf("writing markdown reference: %w", err)
	}
	header := &doc.GenManHeader{Section: "1", Date: &manDate, Source: root.Name(), Manual: root.Name() + " manual"}
	if err := doc.GenManTree(root, header, manDir); err != nil {
		return fmt.Errorf("writing man pages: %w", err)
	}
	return nil
}

// disableAutoGenTag drops cobra's "Auto generated on <date>" footer from
// every page; cobra only partly carries the root's setting to subcommands.
func disableAutoGenTag(cmd *cobra.Command) {
	cmd.DisableAutoGenTag = true
	for _, c := range cmd.Commands() {
		disableAutoGenTag(c)
	}
}

// clean creates dir and removes the generated files in it.
func clean(dir, pattern string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	stale, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return err
	}
	for _, f := range stale {
		if err := os.Remove(f); err != nil {
			return fmt.Errorf("removing stale page: %w", err)
		}
	}
	return nil
}
