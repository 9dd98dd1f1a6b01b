//go:build sourcetree

package main

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regctl/regctl/test/apiserver"
)

// TestASourceTreesStoresAgreeWithItsKubeAPIServer runs in a regctl built
// from a Kubernetes tree changed as releases/check-source changes it: its
// storage factory stores configmaps under /registry/configs/, their
// strategy's PrepareForCreate annotates them and its
// DefaultGarbageCollectionPolicy orphans their dependents, so a delete
// leaves them with the orphan finalizer. The kube-apiserver built from
// the same tree, on the same etcd, agrees with regctl both ways.
func TestASourceTreesStoresAgreeWithItsKubeAPIServer(t *testing.T) {
	s := apiserver.Start(t)
	etcdFlag := "--etcd-servers=" + s.EtcdURL
	ctx := context.Background()
	cms := s.Client.CoreV1().ConfigMaps("default")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "from-server"}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	manifest := writeFile(t, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-regctl, namespace: default}\ndata: {b: \"2\"}\n")
	if _, stderr, code := run(t, "create", "-f", manifest, etcdFlag); code != 0 {
		t.Fatalf("create: exit %d: %s", code, stderr)
	}

	stdout, stderr, code := run(t, "keys", "configmaps", "-n", "default", etcdFlag)
	if want := "/registry/configs/default/from-regctl\n/registry/configs/default/from-server\n"; code != 0 || stdout != want {
		t.Errorf("keys: exit %d, %q (%s), want both under the tree's prefix", code, stdout, stderr)
	}
	for _, name := range []string{"from-server", "from-regctl"} {
		cm, err := cms.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the server reads %s: %v", name, err)
		}
		if cm.Annotations["example.com/prepared"] != "true" {
			t.Errorf("%s: annotations %v, want the tree's PrepareForCreate's", name, cm.Annotations)
		}
		stdout, stderr, code := run(t, "get", "configmap/"+name, "-n", "default", "-o", "json", "--show-managed-fields", etcdFlag)
		raw, err := s.Client.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces/default/configmaps/"+name).SetHeader("Accept", "application/json").DoRaw(ctx)
		if err != nil || code != 0 {
			t.Fatalf("get %s: exit %d %s; server: %v", name, code, stderr, err)
		}
		if got, want := normalize(t, []byte(stdout)), normalize(t, raw); got != want {
			t.Errorf("%s: regctl and the server differ\nregctl: %s\nserver: %s", name, got, want)
		}
	}

	if _, stderr, code := run(t, "delete", "configmap/from-regctl", "-n", "default", etcdFlag); code != 0 {
		t.Fatalf("delete: exit %d: %s", code, stderr)
	}
	if err := cms.Delete(ctx, "from-server", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"from-server", "from-regctl"} {
		cm, err := cms.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: %v, want it kept until the garbage collector orphans its dependents", name, err)
		}
		if cm.DeletionTimestamp == nil || !slices.Equal(cm.Finalizers, []string{metav1.FinalizerOrphanDependents}) {
			t.Errorf("%s: deleted at %v with finalizers %v, want the tree's orphan policy", name, cm.DeletionTimestamp, cm.Finalizers)
		}
	}
}
