package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// initsBefore are regctl's start-up packages, each with the packages whose
// initialisers it must run before: logs/early points stderr away before
// the etcd client makes its logger; english sets kubectl's translations
// before kubectl's get loads them; gctune sets the collector's pacing
// before the Kubernetes packages allocate their schemes. Nothing of those
// packages imports regctl's, so only Go's rule of initialising, among the
// packages whose dependencies are done, the first in import-path order
// puts them there: regctl's module path sorts before go.etcd.io and k8s.io.
// Renaming the module, or a new dependency, would move them without a
// word; this test says so.
var initsBefore = map[string][]string{
	"github.com/regctl/regctl/internal/logs/early": {"go.etcd.io/etcd/client/v3"},
	"github.com/regctl/regctl/internal/english":    {"k8s.io/kubectl/pkg/cmd/get"},
	"github.com/regctl/regctl/internal/gctune":     {"k8s.io/api/core/v1", "k8s.io/kubernetes/pkg/api/legacyscheme"},
}

func TestStartUpPackagesInitialiseFirst(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(regctlBinary(t), "version")
	// The runtime traces each package's initialiser on file descriptor 2.
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("regctl version: %v\n%s", err, stderr.String())
	}
	order := map[string]int{}
	for i, line := range strings.Split(stderr.String(), "\n") {
		if fields := strings.Fields(line); len(fields) > 1 && fields[0] == "init" {
			order[fields[1]] = i
		}
	}
	for first, later := range initsBefore {
		at, ok := order[first]
		if !ok {
			t.Errorf("%s has no initialiser run", first)
			continue
		}
		for _, pkg := range later {
			if then, ok := order[pkg]; !ok || then < at {
				t.Errorf("%s is initialised before %s (or not at all): %s's initialiser comes too late", pkg, first, first)
			}
		}
	}
}
