package handle

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Data flows one way: the map's assembly builds handles, and what reads,
// writes, scans or prints takes them without linking the assembly.
func TestOperationsDoNotLinkTheAssembly(t *testing.T) {
	const assembly = "github.com/regctl/regctl/internal/storagemap"
	pkgs := []string{"../handle", "../storedvalue", "../stores", "../scan", "../render", "../etcdview", "../manifest", "../writes", "../target", "../get", "../routes", "../keys", "../inspect", "../migrate", "../changes", "../restore"}
	// One go list for them all: each line is a package and what it links.
	out, err := exec.Command("go", append([]string{"list", "-f", `{{.ImportPath}} {{join .Deps " "}}`}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(pkgs) {
		t.Fatalf("go list printed %d packages, want %d", len(lines), len(pkgs))
	}
	for _, line := range lines {
		fields := strings.Fields(line)
		if slices.Contains(fields[1:], assembly) {
			t.Errorf("%s links %s", fields[0], assembly)
		}
	}
}
