package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/version"
)

// writtenBy is the release that wrote the values in testdata/written-by-*:
// a Pod whose container mounts a volume with bindMountOptions, a field
// Kubernetes 1.37 added (behind its VolumeBindMountOptions gate).
const writtenBy = "v1.37.2"

const newerPod = `apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  containers:
  - name: c
    image: busybox
    volumeMounts: [{name: scratch, mountPath: /scratch, bindMountOptions: [noexec]}]
  volumes: [{name: scratch, emptyDir: {}}]
`

// TestAValueOfANewerReleaseIsNotWrittenOver puts into etcd, byte for byte,
// a Pod a kube-apiserver of writtenBy stored with a field older releases
// do not know. The build of that release replaces it keeping the field;
// an older build refuses, naming the field and the build to use.
func TestAValueOfANewerReleaseIsNotWrittenOver(t *testing.T) {
	t.Parallel()
	fixture := filepath.Join("testdata", "written-by-"+writtenBy, "pod.pb")
	const key = "/registry/pods/shop/web"
	if *update && releaseVersion == writtenBy {
		g := newLiveEtcd(t)
		mustRun(t, "create", "-f", manifestFile(t, newerPod), g.flag(), "--feature-gates=VolumeBindMountOptions=true")
		if err := os.MkdirAll(filepath.Dir(fixture), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fixture, g.rawValue(t, key), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := newLiveEtcd(t)
	value, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatalf("reading the value %s wrote (run with -update on its build to write it): %v", writtenBy, err)
	}
	mustRun(t, "create", "-f", manifestFile(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n"), s.flag())
	if _, err := s.client.Put(context.Background(), key, string(value)); err != nil {
		t.Fatal(err)
	}

	manifest := manifestFile(t, mustRun(t, "get", "pods/web", "-n", "shop", "-o", "yaml", s.flag()))
	stdout, stderr, code := run(t, "replace", "-f", manifest, s.flag())
	newer, _ := version.MustParse(writtenBy).Compare(releaseVersion)
	if newer <= 0 {
		// This build's own release (or a later one) knows the field.
		if code != 0 || stdout != "pod/web replaced\n" {
			t.Fatalf("replace: exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		if !bytes.Contains(s.rawValue(t, key), []byte("noexec")) {
			t.Errorf("the replace dropped bindMountOptions")
		}
		return
	}
	if code == 0 || strings.Count(stderr, "error: ") != 1 ||
		!strings.Contains(stderr, "refusing to write over "+key+": it holds fields this release's v1 Pod does not declare (written by a newer kube-apiserver)") ||
		!strings.Contains(stderr, "use the regctl built for the cluster's Kubernetes release") {
		t.Errorf("replace by an older release: exit %d, stderr %q; want one error refusing it", code, stderr)
	}
	if got := s.rawValue(t, key); !bytes.Equal(got, value) {
		t.Errorf("the value was written over")
	}
}
