package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"sigs.k8s.io/yaml"

	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/test/apiserver"
)

// copyFile copies src to root/path, making its directories.
func copyFile(t *testing.T, src, root, path string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(root, path)
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestApiserverManifestAgreesWithKubeAPIServer takes a kubeadm control
// plane's kube-apiserver manifest (testdata) with its /etc/kubernetes tree
// copied under a directory: etcd's TLS files, an encryption config. A real
// kube-apiserver runs with the manifest's storage flags on a TLS etcd.
// regctl given the manifest and the tree builds the same map as with the
// same flags by hand, and reads through it what the server serves.
func TestApiserverManifestAgreesWithKubeAPIServer(t *testing.T) {
	etcd := newTLSEtcd(t)
	root := t.TempDir()
	ca := copyFile(t, etcd.ca.certFile, root, "etc/kubernetes/pki/etcd/ca.crt")
	cert := copyFile(t, etcd.client.certFile, root, "etc/kubernetes/pki/apiserver-etcd-client.crt")
	key := copyFile(t, etcd.client.keyFile, root, "etc/kubernetes/pki/apiserver-etcd-client.key")
	enc := copyFile(t, encryptionConfig(t), root, "etc/kubernetes/enc/encryption.yaml")
	manifest := []string{"--apiserver-manifest=testdata/kube-apiserver.yaml", "--manifest-root=" + root, "--etcd-servers=" + etcd.url}
	storage := []string{
		"--etcd-cafile=" + ca, "--etcd-certfile=" + cert, "--etcd-keyfile=" + key,
		"--encryption-provider-config=" + enc,
		"--feature-gates=AllBeta=true", "--runtime-config=api/beta=true",
		"--watch-cache-sizes=secrets#0,deployments.apps#0",
		"--service-cluster-ip-range=10.96.0.0/12", "--allow-privileged=true",
	}

	// The map first, before the server sets its gates in this process.
	fromManifest := mustRun(t, append([]string{"routes", "-o", "yaml"}, manifest...)...)
	byHand := mustRun(t, append([]string{"routes", "-o", "yaml", "--etcd-servers=" + etcd.url}, storage...)...)
	if fromManifest != byHand {
		t.Errorf("the manifest's map differs from the same flags by hand")
	}
	var table routetable.RouteTable
	if err := yaml.Unmarshal([]byte(fromManifest), &table); err != nil {
		t.Fatal(err)
	}
	if !table.FeatureGates["AllBeta"] {
		t.Errorf("the manifest's feature gates are not the map's: %v", table.FeatureGates)
	}
	want := map[string][2]string{ // decorator, encryption
		"secrets":          {routetable.DecoratorUndecorated, "aescbc:v1:key1"},
		"deployments.apps": {routetable.DecoratorUndecorated, "identity"},
		"configmaps":       {routetable.DecoratorCacher, "identity"},
	}
	for _, r := range table.Routes {
		if w, ok := want[r.Path]; ok {
			if r.Decorator != w[0] || r.Encryption != w[1] {
				t.Errorf("%s: decorator %s, encryption %s; the manifest says %s, %s", r.Path, r.Decorator, r.Encryption, w[0], w[1])
			}
			delete(want, r.Path)
		}
	}
	if len(want) > 0 {
		t.Errorf("the manifest's map lacks %v", want)
	}

	storageConfig := storagebackend.NewDefaultConfig("/registry", nil)
	storageConfig.Transport = storagebackend.TransportConfig{ServerList: []string{etcd.url}, TrustedCAFile: ca, CertFile: cert, KeyFile: key}
	s := apiserver.StartOn(t, storageConfig, storage...)
	ctx := context.Background()
	createNamespace(t, s, "shop")
	if _, err := s.Client.CoreV1().Secrets("shop").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db"}, StringData: map[string]string{"password": "hunter2"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Client.CoreV1().ConfigMaps("shop").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"mode": "fast"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "web"}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
	if _, err := s.Client.AppsV1().Deployments("shop").Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ arg, path string }{
		{"secrets/db", "/api/v1/namespaces/shop/secrets/db"},
		{"configmaps/settings", "/api/v1/namespaces/shop/configmaps/settings"},
		{"deployments/web", "/apis/apps/v1/namespaces/shop/deployments/web"},
		{"services/kubernetes", "/api/v1/namespaces/default/services/kubernetes"},
	} {
		ns := "shop"
		if strings.HasPrefix(c.arg, "services/") {
			ns = "default"
		}
		stdout := mustRun(t, append([]string{"get", c.arg, "-n", ns, "-o", "json", "--show-managed-fields"}, manifest...)...)
		if got, want := normalize(t, []byte(stdout)), normalize(t, serverGET(t, s, c.path)); got != want {
			t.Errorf("get %s: regctl and the apiserver differ\nregctl:    %s\napiserver: %s", c.arg, got, want)
		}
	}
}
