package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The programs regctl is compared with are built from Go modules, at the
// versions regctl's own module graph uses, each in a throwaway module under
// the harness's temporary directory: etcdctl's and kubernetes' go.mod files
// carry replace directives, so `go install pkg@version` refuses both, and
// regctl's go.mod is not to grow tools it does not import.

// moduleVersion is the version of module path in regctl's build, following
// a replace directive.
func moduleVersion(path string) (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{with .Replace}}{{.Version}}{{else}}{{.Version}}{{end}}", path).Output()
	if err != nil {
		return "", fmt.Errorf("finding the version of %s: %w", path, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// moduleDir is where module path of regctl's build sits in the module cache.
func moduleDir(path string) (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", path).Output()
	if err != nil {
		return "", fmt.Errorf("finding %s: %w", path, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// buildEtcdctl builds etcdctl at the version of regctl's etcd.
func buildEtcdctl(dir string) (string, error) {
	version, err := moduleVersion("go.etcd.io/etcd/server/v3")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "etcdctl")
	mod := filepath.Join(dir, "etcdctl-build")
	pkg := "go.etcd.io/etcd/etcdctl/v3"
	err = inModule(mod, nil, [][]string{
		{"get", pkg + "@" + version},
		{"build", "-trimpath", "-ldflags=-s -w", "-o", bin, pkg},
	})
	if err != nil {
		return "", fmt.Errorf("building etcdctl %s: %w", version, err)
	}
	return bin, nil
}

// buildKubectl builds kubectl from its upstream main (cmd/kubectl of the
// kubernetes module regctl uses) against the k8s.io/kubectl, client-go and
// component-base versions regctl's go.mod pins, stamped with the Kubernetes
// version as a release is. Building k8s.io/kubernetes/cmd/kubectl within
// regctl's module would need go.sum entries for kubectl's own dependencies,
// which regctl does not import.
func buildKubectl(dir string) (string, error) {
	k8sVersion, err := moduleVersion("k8s.io/kubernetes")
	if err != nil {
		return "", err
	}
	k8sDir, err := moduleDir("k8s.io/kubernetes")
	if err != nil {
		return "", err
	}
	main, err := os.ReadFile(filepath.Join(k8sDir, "cmd", "kubectl", "kubectl.go"))
	if err != nil {
		return "", err
	}
	var gets []string
	for _, m := range []string{"k8s.io/kubectl", "k8s.io/client-go", "k8s.io/component-base"} {
		v, err := moduleVersion(m)
		if err != nil {
			return "", err
		}
		gets = append(gets, m+"@"+v)
	}
	bin := filepath.Join(dir, "kubectl")
	mod := filepath.Join(dir, "kubectl-build")
	err = inModule(mod, map[string][]byte{"main.go": main}, [][]string{
		append([]string{"get"}, gets...),
		{"mod", "tidy"},
		{"build", "-trimpath", "-ldflags=-s -w -X k8s.io/component-base/version.gitVersion=" + k8sVersion, "-o", bin, "."},
	})
	if err != nil {
		return "", fmt.Errorf("building kubectl %s: %w", k8sVersion, err)
	}
	return bin, nil
}

// inModule creates a module in dir holding files and runs the go commands
// in it.
func inModule(dir string, files map[string][]byte, steps [][]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	steps = append([][]string{{"mod", "init", "bench.local/" + filepath.Base(dir)}}, steps...)
	for _, args := range steps {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}
