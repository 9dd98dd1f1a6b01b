package main

import (
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
