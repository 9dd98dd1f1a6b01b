package main

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/version"
)

// otherRelease is a release one minor after (or, with back, before) the
// one this build carries.
func otherRelease(back bool) string {
	v := version.MustParse(releaseVersion)
	if back {
		return fmt.Sprintf("v%d.%d.4", v.Major(), v.Minor()-1)
	}
	return fmt.Sprintf("v%d.%d.0", v.Major(), v.Minor()+1)
}

func minorOf(v string) string {
	p := version.MustParse(v)
	return fmt.Sprintf("%d.%d", p.Major(), p.Minor())
}

// kubeadmConfig is the ConfigMap kubeadm keeps its cluster configuration
// in, naming release.
func kubeadmConfig(release string) string {
	return `apiVersion: v1
kind: Namespace
metadata: {name: kube-system}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: kubeadm-config, namespace: kube-system}
data:
  ClusterConfiguration: |
    apiVersion: kubeadm.k8s.io/v1beta4
    kind: ClusterConfiguration
    kubernetesVersion: ` + release + `
    controlPlaneEndpoint: cp.example:6443
`
}

const mismatchObject = `apiVersion: v1
kind: ConfigMap
metadata: {name: web, namespace: kube-system}
data: {a: b}
`

// TestAnotherReleasesClusterIsToldAndNotWritten: on the etcd of a cluster
// whose kubeadm-config names another release, every command says so once
// and names the build to use; writes are refused unless told to ignore it.
func TestAnotherReleasesClusterIsToldAndNotWritten(t *testing.T) {
	t.Parallel()
	for _, back := range []bool{false, true} {
		other := otherRelease(back)
		t.Run(other, func(t *testing.T) {
			t.Parallel()
			s := newLiveEtcd(t)
			mustRun(t, "create", "-f", writeFile(t, "kubeadm-config.yaml", kubeadmConfig(other)), s.flag())
			told := "warning: this cluster runs Kubernetes " + strings.TrimPrefix(other, "v") + " (kubeadm-config's kubernetesVersion) and this regctl carries " + strings.TrimPrefix(releaseVersion, "v")
			use := "use the regctl for Kubernetes " + minorOf(other) + " (make build K8S=" + minorOf(other) + ")"

			stdout, stderr, code := run(t, "get", "configmaps", "-n", "kube-system", "-o", "name", s.flag())
			if code != 0 || stdout != "configmap/kubeadm-config\n" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, told) || !strings.Contains(stderr, use) ||
				!strings.Contains(stderr, "writes are refused unless `--kubernetes-version-mismatch=ignore`") {
				t.Errorf("get: exit %d, stdout %q, stderr %q; want the objects and one warning: %q ... %q", code, stdout, stderr, told, use)
			}
			// A diff writes nothing: it reads, warned, as a dry run does.
			obj := writeFile(t, "obj.yaml", mismatchObject)
			for _, args := range [][]string{{"scan"}, {"keys"}, {"delete", "configmaps/kubeadm-config", "-n", "kube-system", "--dry-run"}, {"diff", "-f", obj}} {
				if _, stderr, _ := run(t, append(args, s.flag())...); strings.Count(stderr, told) != 1 {
					t.Errorf("%s: stderr %q, want the warning once", args[0], stderr)
				}
			}

			for _, args := range [][]string{{"create", "-f", obj}, {"delete", "configmaps/kubeadm-config", "-n", "kube-system"}, {"migrate"}} {
				_, stderr, code := run(t, append(args, s.flag())...)
				if code == 0 || !strings.Contains(stderr, "so it does not write") || !strings.Contains(stderr, use) || strings.Count(stderr, "\n") != 1 {
					t.Errorf("%s: exit %d, stderr %q; want one error refusing the write", args[0], code, stderr)
				}
			}
			if n := s.count(t, "/registry/configmaps/kube-system/web"); n != 0 {
				t.Fatal("written on a cluster of another release")
			}
			if s.count(t, "/registry/configmaps/kube-system/kubeadm-config") != 1 {
				t.Fatal("kubeadm-config was deleted on a cluster of another release")
			}

			stdout, stderr, code = run(t, "create", "-f", obj, s.flag(), "--kubernetes-version-mismatch=ignore")
			if code != 0 || stdout != "configmap/web created\n" || !strings.HasPrefix(stderr, told) || strings.Contains(stderr, "refused") {
				t.Errorf("create with the mismatch ignored: exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
		})
	}
}

func TestTheSameReleaseIsQuiet(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	mustRun(t, "create", "-f", writeFile(t, "kubeadm-config.yaml", kubeadmConfig(releaseVersion)), s.flag())
	obj := writeFile(t, "obj.yaml", mismatchObject)
	stdout, stderr, code := run(t, "create", "-f", obj, s.flag())
	if code != 0 || stdout != "configmap/web created\n" || strings.Contains(stderr, "this cluster runs") {
		t.Errorf("create on a cluster of this release: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if _, stderr, code := run(t, "get", "pods", s.flag(), "--kubernetes-version-mismatch=maybe"); code == 0 || stderr != "error: `--kubernetes-version-mismatch` is refuse or ignore, not \"maybe\"\n" {
		t.Errorf("a bad value: exit %d, stderr %q", code, stderr)
	}
}

// TestNewerKubeletsAreALowerBound: no kubelet is newer than its
// kube-apiserver, so a newer one tells a newer cluster; an older one says
// nothing.
func TestNewerKubeletsAreALowerBound(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	node := func(name, kubelet string) string {
		return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name + "}\nstatus: {nodeInfo: {kubeletVersion: " + kubelet + "}}\n"
	}
	mustRun(t, "create", "-f", writeFile(t, "old.yaml", node("old", otherRelease(true))), s.flag())
	if _, stderr, _ := run(t, "get", "nodes", s.flag()); strings.Contains(stderr, "this cluster runs") {
		t.Errorf("an older kubelet told a mismatch: %q", stderr)
	}
	// A node's status is written by its kubelet; create keeps it.
	mustRun(t, "create", "-f", writeFile(t, "new.yaml", node("new", otherRelease(false))), s.flag())
	_, stderr, _ := run(t, "get", "nodes", s.flag())
	want := "warning: this cluster runs Kubernetes " + minorOf(otherRelease(false)) + " or newer (node new's kubelet is " + strings.TrimPrefix(otherRelease(false), "v") + ")"
	if !strings.HasPrefix(stderr, want) {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
}

// TestTheManifestsImageIsTheClustersRelease: the image of the manifest's
// kube-apiserver names its release; a flag this build does not know is
// explained by it.
func TestTheManifestsImageIsTheClustersRelease(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	other := otherRelease(false)
	manifest := func(image string, flags ...string) string {
		return writeFile(t, "kube-apiserver.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: kube-apiserver, namespace: kube-system}\nspec:\n  containers:\n  - name: kube-apiserver\n    image: registry.k8s.io/kube-apiserver:"+image+
			"\n    command: [kube-apiserver, "+strings.Join(append([]string{"--etcd-servers=" + s.url}, flags...), ", ")+"]\n")
	}
	_, stderr, code := run(t, "get", "pods", "--apiserver-manifest", manifest(other))
	if code != 0 || !strings.HasPrefix(stderr, "warning: this cluster runs Kubernetes "+strings.TrimPrefix(other, "v")+" (the apiserver manifest's image registry.k8s.io/kube-apiserver:"+other+")") {
		t.Errorf("exit %d, stderr %q; want a warning naming the manifest's image", code, stderr)
	}
	if _, stderr, _ := run(t, "get", "pods", "--apiserver-manifest", manifest(releaseVersion)); strings.Contains(stderr, "warning") {
		t.Errorf("a manifest of this release: stderr %q", stderr)
	}
	_, stderr, code = run(t, "get", "pods", "--apiserver-manifest", manifest(other, "--a-flag-of-the-next-release=1"))
	if code == 0 || !strings.Contains(stderr, "which is not a flag of kube-apiserver "+releaseVersion+" (the manifest runs kube-apiserver "+strings.TrimPrefix(other, "v")+": use the regctl for Kubernetes "+minorOf(other)+")") {
		t.Errorf("a flag of the manifest's release: exit %d, stderr %q", code, stderr)
	}
}
