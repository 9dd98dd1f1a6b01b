package routetable

import (
	"os/exec"
	"strings"
	"testing"
)

// The route table is compared by tools and CI jobs that have no use for the
// server: keep this package free of it, and of the API machinery.
func TestLinksNoServerCode(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "k8s.io/") || strings.HasPrefix(dep, "go.etcd.io/") {
			t.Errorf("routetable links %s", dep)
		}
	}
}
