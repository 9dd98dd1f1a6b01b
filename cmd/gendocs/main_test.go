//go:build !k8s1.35 && !k8s1.36

// The reference and man pages in docs/ are those of the newest release's
// build (the root module's): the server's flags they list, with their
// ranges and defaults, are that release's.

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/spf13/pflag"

	"github.com/regctl/regctl/internal/docgen"
)

// TestDocsAreCurrent regenerates the reference and man pages as the
// program does and compares them with docs/.
func TestDocsAreCurrent(t *testing.T) {
	// generate empties pflag.CommandLine, as regctl does, whose flags
	// cobra adds to every command; the test's own are put back.
	defer func(saved *pflag.FlagSet) { pflag.CommandLine = saved }(pflag.CommandLine)

	got := t.TempDir()
	if err := generate(got); err != nil {
		t.Fatal(err)
	}
	const regenerate = "run `make docs` (go run ./cmd/gendocs docs) and commit the result"
	for _, sub := range []string{docgen.ReferenceDir, docgen.ManDir} {
		want := filepath.Join("..", "..", "docs", sub)
		gotFiles, wantFiles := docFiles(t, filepath.Join(got, sub)), docFiles(t, want)
		if len(wantFiles) == 0 {
			t.Errorf("docs/%s has no pages: %s", sub, regenerate)
			continue
		}
		for _, name := range gotFiles {
			path := filepath.Join("docs", sub, name)
			if !slices.Contains(wantFiles, name) {
				t.Errorf("%s is missing: %s", path, regenerate)
				continue
			}
			g, _ := os.ReadFile(filepath.Join(got, sub, name))
			w, _ := os.ReadFile(filepath.Join(want, name))
			if !bytes.Equal(g, w) {
				t.Errorf("%s is stale: %s", path, regenerate)
			}
		}
		for _, name := range wantFiles {
			if !slices.Contains(gotFiles, name) {
				t.Errorf("%s documents a command that no longer exists: %s", filepath.Join("docs", sub, name), regenerate)
			}
		}
	}
}

func docFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}
