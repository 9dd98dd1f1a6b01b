package handle

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Data flows one way: the map's assembly builds handles, and what reads,
// writes, scans or prints takes them without linking the assembly or any of
// its parts, nor the generic apiserver it assembles the map with (with its
// admission plugins and informers, some 270 packages more in each test
// binary that links it). Every package under internal/ is held to it but the
// assembly itself and the command layer, which opens sessions: a new
// package is guarded from its first line.
func TestOperationsDoNotLinkTheAssembly(t *testing.T) {
	const (
		assembly      = "github.com/regctl/regctl/internal/storagemap"
		genericServer = "k8s.io/apiserver/pkg/server"
	)
	commandLayer := []string{"github.com/regctl/regctl/internal/cli", "github.com/regctl/regctl/internal/completion"}
	// One go list for them all: each line is a package and what it links.
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if under(fields[0], assembly) || slices.ContainsFunc(commandLayer, func(c string) bool { return under(fields[0], c) }) {
			continue
		}
		pkgs = append(pkgs, "../"+strings.TrimPrefix(fields[0], "github.com/regctl/regctl/internal/"))
		for _, dep := range fields[1:] {
			if under(dep, assembly) || dep == genericServer {
				t.Errorf("%s links %s", fields[0], dep)
			}
		}
	}
	if len(pkgs) < 30 {
		t.Fatalf("go list named %d packages under internal/ outside the assembly and the commands: the guard guards too little", len(pkgs))
	}
	statSources(t, pkgs)
}

// under tells whether pkg is path or a package below it.
func under(pkg, path string) bool { return pkg == path || strings.HasPrefix(pkg, path+"/") }

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
