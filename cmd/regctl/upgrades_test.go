package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/version"
)

// TestUpgradesPageIsCurrent writes docs/upgrades.md from the committed
// route tables of the releases regctl builds for: for each upgrade, what
// `regctl routes diff` says changes in storage.
func TestUpgradesPageIsCurrent(t *testing.T) {
	t.Parallel()
	tables, err := filepath.Glob(filepath.Join("..", "..", "docs", "routes", "v*.yaml"))
	if err != nil || len(tables) < 2 {
		t.Fatalf("route tables %v (%v): want one per release", tables, err)
	}
	releaseOf := func(path string) *version.Version {
		return version.MustParse(strings.TrimSuffix(filepath.Base(path), ".yaml"))
	}
	slices.SortFunc(tables, func(a, b string) int {
		c, _ := releaseOf(a).Compare(releaseOf(b).String())
		return c
	})

	var page strings.Builder
	page.WriteString(`# What each Kubernetes upgrade changes in storage

Generated from the route tables of a default kube-apiserver of each release regctl builds
for (docs/routes/, each checked in CI by its own build) by ` + "`regctl routes diff OLD NEW`" + `:
resources added and removed, and, for the others, changes of storage version, key prefix,
decorator, media type or encryption, and of their wiring: constructors, strategies and
their hooks, store functions, selectable fields, watch cache triggers and indexers (see
` + "`regctl routes describe`" + `). Regenerate it with
` + "`go test ./cmd/regctl -run TestUpgradesPageIsCurrent -update`" + `.

Before an upgrade, run the next release's regctl on today's etcd (see
[releases.md](releases.md#before-an-upgrade)): ` + "`scan`" + ` says what it cannot decode and
what its ` + "`migrate`" + ` would rewrite.
`)
	for i := 1; i < len(tables); i++ {
		old, new := tables[i-1], tables[i]
		stdout, stderr, code := run(t, "routes", "diff", old, new)
		if code > 1 || stderr != "" {
			t.Fatalf("routes diff %s %s: exit %d, stderr %q", old, new, code, stderr)
		}
		// The page names the tables as the repository does.
		stdout = strings.ReplaceAll(stdout, filepath.Join("..", "..", "docs")+string(filepath.Separator), "docs/")
		fmt.Fprintf(&page, "\n## %s to %s\n\n```console\n$ regctl routes diff %s %s\n%s```\n",
			releaseOf(old), releaseOf(new), strings.TrimPrefix(old, filepath.Join("..", "..")+string(filepath.Separator)),
			strings.TrimPrefix(new, filepath.Join("..", "..")+string(filepath.Separator)), stdout)
	}
	goldenFile(t, filepath.Join("..", "..", "docs", "upgrades.md"), page.String())
}
