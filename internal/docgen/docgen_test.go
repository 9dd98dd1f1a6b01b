package docgen

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// tree is a small command tree with a subcommand, its example and a flag.
func tree() *cobra.Command {
	root := &cobra.Command{Use: "demo", Short: "A demo"}
	hello := &cobra.Command{Use: "hello NAME", Short: "Say hello", Example: "  demo hello world", Run: func(*cobra.Command, []string) {}}
	hello.Flags().Bool("loud", false, "Say it loud")
	root.AddCommand(hello)
	return root
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestGenerateWritesEveryCommandsPagesOnly: a page per command, cobra's
// completion included, in markdown and man; the pages of a command gone
// are removed, other files kept; nothing says when the pages were made,
// so that they change with the tree alone.
func TestGenerateWritesEveryCommandsPagesOnly(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{filepath.Join(ReferenceDir, "demo_gone.md"), filepath.Join(ManDir, "demo-gone.1"), filepath.Join(ReferenceDir, "README")} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Generate(tree(), dir); err != nil {
		t.Fatal(err)
	}
	refs, mans := names(t, filepath.Join(dir, ReferenceDir)), names(t, filepath.Join(dir, ManDir))
	for _, want := range []string{"demo.md", "demo_hello.md", "demo_completion.md", "demo_completion_bash.md", "README"} {
		if !slices.Contains(refs, want) {
			t.Errorf("reference %v lacks %s", refs, want)
		}
	}
	for _, want := range []string{"demo.1", "demo-hello.1", "demo-completion.1"} {
		if !slices.Contains(mans, want) {
			t.Errorf("man pages %v lack %s", mans, want)
		}
	}
	if slices.Contains(refs, "demo_gone.md") || slices.Contains(mans, "demo-gone.1") {
		t.Errorf("the pages of a command gone are kept: %v %v", refs, mans)
	}
	page, err := os.ReadFile(filepath.Join(dir, ReferenceDir, "demo_hello.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "demo hello world") || !strings.Contains(string(page), "--loud") || strings.Contains(string(page), "Auto generated") {
		t.Errorf("demo_hello.md, want its example and flag and no generation tag:\n%s", page)
	}
	man, err := os.ReadFile(filepath.Join(dir, ManDir, "demo-hello.1"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(man), `"Nov 2026"`) {
		t.Errorf("demo-hello.1 is not dated November 2026:\n%.300s", man)
	}

	again := t.TempDir()
	if err := Generate(tree(), again); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(ReferenceDir, "demo_hello.md"), filepath.Join(ManDir, "demo-hello.1")} {
		a, _ := os.ReadFile(filepath.Join(dir, f))
		b, _ := os.ReadFile(filepath.Join(again, f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from one generation to the next", f)
		}
	}
}
