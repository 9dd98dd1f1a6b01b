package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/resource"
)

// TestTypeNameArgumentsEndToEnd reads and deletes objects named TYPE/NAME,
// of one type and of several, on a sandbox etcd.
func TestTypeNameArgumentsEndToEnd(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	s.createPods(t, "default", 3, nil)
	mustRun(t, "create", "-f", manifestFile(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: default}\n"), s.flag())

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "pods/pod-00000", "configmaps/settings", "-o", "name"}, "pod/pod-00000\nconfigmap/settings\n"},
		{[]string{"get", "pods/pod-00002", "cm/settings", "po/pod-00001", "-o", "name"}, "pod/pod-00002\nconfigmap/settings\npod/pod-00001\n"},
		{[]string{"get", "pods", "pod-00001", "pod-00000", "-o", "name"}, "pod/pod-00001\npod/pod-00000\n"},
		{[]string{"get", "pods,configmaps", "-o", "name"}, "pod/pod-00000\npod/pod-00001\npod/pod-00002\nconfigmap/settings\n"},
	} {
		if got := mustRun(t, append(tc.args, s.flag())...); got != tc.want {
			t.Errorf("%v: got\n%s\nwant\n%s", tc.args, got, tc.want)
		}
	}

	// A mix is refused with kubectl's message, before anything is read.
	_, kerr := resource.HasNames([]string{"pods", "pods/pod-00000"})
	if _, stderr, code := run(t, "get", "pods", "pods/pod-00000", s.flag()); code == 0 || kerr == nil || stderr != "error: "+kerr.Error()+"\n" {
		t.Errorf("exit %d, stderr %q; want kubectl's %v", code, stderr, kerr)
	}

	stdout, stderr, code := run(t, "delete", "pods/pod-00000", "configmaps/settings", "pods/pod-00001", "--grace-period=0", s.flag())
	if code != 0 {
		t.Fatalf("delete: exit %d: %s", code, stderr)
	}
	if want := "pod \"pod-00000\" force deleted from default namespace\nconfigmap \"settings\" force deleted from default namespace\npod \"pod-00001\" force deleted from default namespace\n"; stdout != want {
		t.Errorf("delete: stdout %q, want %q", stdout, want)
	}
	if got := mustRun(t, "get", "pods,configmaps", "-o", "name", s.flag()); got != "pod/pod-00002\n" {
		t.Errorf("after delete, left:\n%s", got)
	}
}

// TestManifestInputAsKubectlReadsIt: -f DIR reads the directory's
// manifests, -R its subdirectories' too; binary input is one line that
// quotes none of it; get with no type says what kubectl says.
func TestManifestInputAsKubectlReadsIt(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	dir := t.TempDir()
	for path, content := range map[string]string{
		"ns.yaml":        shopNamespace,
		"notes.txt":      "not a manifest",
		"more/cm.yml":    configMapDoc("deeper"),
		"more/deep.json": `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "deepest", "namespace": "shop"}}`,
	} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, path), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := mustRun(t, "create", "-f", dir, s.flag()); got != "namespace/shop created\n" {
		t.Errorf("create -f DIR: %q, want the directory's manifest alone", got)
	}
	if got := mustRun(t, "create", "-f", filepath.Join(dir, "more"), "-R", s.flag()); got != "configmap/deeper created\nconfigmap/deepest created\n" {
		t.Errorf("create -f DIR -R: %q", got)
	}
	if _, stderr, code := run(t, "diff", "-f", dir, "-R", s.flag()); code != 0 {
		t.Errorf("diff -f DIR -R of what was created: exit %d, %q", code, stderr)
	}

	binary := filepath.Join(dir, "manifest.yaml.gz")
	if err := os.WriteFile(binary, []byte{0x1f, 0x8b, 0x08, 0x00, 0xc3, 0x28, 'k', 'i', 'n', 'd', 0x00}, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"create", "replace", "diff"} {
		_, stderr, code := run(t, cmd, "-f", binary, s.flag())
		if want := "error: reading " + binary + ": binary data, not a YAML or JSON manifest"; code == 0 || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s -f binary: exit %d, stderr %q; want one line %q", cmd, code, stderr, want)
		}
	}

	_, stderr, code := run(t, "get", s.flag())
	want := "You must specify the type of resource to get. Use \"regctl routes\" for a complete list of supported resources.\n\nerror: Required resource not specified. See 'regctl get -h' for help and examples\n"
	if code == 0 || stderr != want {
		t.Errorf("get with no type: exit %d, stderr %q, want %q", code, stderr, want)
	}
}
