package servermanifest

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestReadTakesTheServersFlagsInTheirForms(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kube-apiserver.yaml")
	manifest := `apiVersion: v1
kind: Pod
metadata: {name: kube-apiserver-node1, namespace: kube-system}
spec:
  containers:
  - name: sidecar
    command: [/bin/sh, -c, sleep infinity]
  - name: kube-apiserver
    image: registry.k8s.io/kube-apiserver:v1.37.2
    command: [/usr/local/bin/kube-apiserver, --etcd-servers=https://127.0.0.1:2379]
    args: [--watch-cache-sizes, "secrets#0", --allow-privileged, --etcd-prefix=/registry]
`
	if err := os.WriteFile(path, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Flag{{"etcd-servers", "https://127.0.0.1:2379"}, {"watch-cache-sizes", "secrets#0"}, {"allow-privileged", "true"}, {"etcd-prefix", "/registry"}}
	if !reflect.DeepEqual(got.Flags, want) || got.Image != "registry.k8s.io/kube-apiserver:v1.37.2" {
		t.Errorf("Read = %+v, want flags %v and the server's image", got, want)
	}
	if got := Under("/copy", "/etc/kubernetes/pki/ca.crt"); got != "/copy/etc/kubernetes/pki/ca.crt" {
		t.Errorf("Under = %s", got)
	}
	if got := Under("", "/etc/kubernetes/pki/ca.crt"); got != "/etc/kubernetes/pki/ca.crt" {
		t.Errorf("Under without a root = %s", got)
	}
}
