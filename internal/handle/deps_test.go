package handle

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Data flows one way: the map's assembly builds handles, and what reads,
// writes, scans or prints takes them without linking the assembly or any of
// its parts.
func TestOperationsDoNotLinkTheAssembly(t *testing.T) {
	const assembly = "github.com/regctl/regctl/internal/storagemap"
	pkgs := []string{"../handle", "../storedvalue", "../stores", "../stores/history", "../stores/listwatch", "../stores/usage", "../scan", "../render", "../etcdview", "../etcdview/embedded", "../etcdview/snapshot", "../manifest", "../writes", "../target", "../get", "../routes", "../keys", "../inspect", "../migrate", "../changes", "../restore", "../why", "../clock", "../space"}
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
		for _, dep := range fields[1:] {
			if dep == assembly || strings.HasPrefix(dep, assembly+"/") {
				t.Errorf("%s links %s", fields[0], dep)
			}
		}
	}
	statSources(t, pkgs)
}

// statSources stats the Go files of regctl's packages that pkgs link: go
// test caches a result until a file the test opened or stat'ed changes,
// and the imports go list read are in those files.
func statSources(t *testing.T, pkgs []string) {
	t.Helper()
	format := `{{with .Module}}{{if eq .Path "github.com/regctl/regctl"}}{{$.Dir}}{{range $.GoFiles}} {{.}}{{end}}{{end}}{{end}}`
	out, err := exec.Command("go", append([]string{"list", "-deps", "-f", format}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		for _, f := range fields[1:] {
			if _, err := os.Stat(filepath.Join(fields[0], f)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestTheMapLinksNoPluginLoader keeps the go plugin loader, which
// kustomize's loader links through kubectl's argument and printing
// packages, out of the assembly and of the tests of the map and the
// stores: a binary that links it is linked by the host's linker, at twice
// the time, and these test binaries are two of the suite's largest.
func TestTheMapLinksNoPluginLoader(t *testing.T) {
	pkgs := []string{"../storagemap/...", "../stores"}
	out, err := exec.Command("go", append([]string{"list", "-test", "-deps", "-f", `{{if eq .ImportPath "plugin"}}{{.ImportPath}}{{end}}`}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if strings.TrimSpace(string(out)) != "" {
		t.Errorf("the map's packages or their tests link the go plugin loader (go list -test -deps %s): link it from internal/cli or the commands instead", strings.Join(pkgs, " "))
	}
	statSources(t, pkgs)
}
