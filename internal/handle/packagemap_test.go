package handle

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestHowItWorksMapsEveryPackage holds docs/how-it-works.md's map of the
// packages to the tree: every package under internal/ is named in its
// section "The packages", by its path (internal/stores) or, below its
// parent's, by its name (`   history   every revision ...`).
func TestHowItWorksMapsEveryPackage(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "how-it-works.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start, end := strings.Index(text, "### The packages"), strings.Index(text, "### The rest of the chain")
	if start < 0 || end < start {
		t.Fatal(`docs/how-it-works.md has no section "The packages" before "The rest of the chain"`)
	}
	text = text[start:end]
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || d.Name() == "testdata" {
			return err
		}
		if goFiles, _ := filepath.Glob(filepath.Join(path, "*.go")); len(goFiles) == 0 {
			return nil
		}
		rel, err := filepath.Rel("..", path)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if strings.Contains(text, "internal/"+rel) {
			return nil
		}
		parent, name := filepath.Dir(rel), filepath.Base(rel)
		listed := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`)
		if parent == "." || !strings.Contains(text, "internal/"+parent) || !listed.MatchString(text) {
			t.Errorf("docs/how-it-works.md's map of the packages does not name internal/%s", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
