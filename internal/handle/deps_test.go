package handle

import (
	"os/exec"
	"strings"
	"testing"
)

// Data flows one way: the map's assembly builds handles, and what reads,
// writes, scans or prints takes them without linking the assembly.
func TestOperationsDoNotLinkTheAssembly(t *testing.T) {
	const assembly = "github.com/regctl/regctl/internal/storagemap"
	for _, pkg := range []string{"../handle", "../storedvalue", "../stores", "../scan", "../render", "../etcdview", "../manifest", "../apply", "../target", "../get", "../routes", "../keys", "../inspect", "../migrate", "../changes"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep == assembly {
				t.Errorf("%s links %s", strings.TrimPrefix(pkg, "../"), assembly)
			}
		}
	}
}
