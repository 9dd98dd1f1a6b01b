//go:build bench

package main

import (
	"encoding/base64"
	"io"
	"os"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/storage/storagebackend"
	restclient "k8s.io/client-go/rest"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	"sigs.k8s.io/yaml"
)

// TestServeKubeAPIServer serves a kube-apiserver on the etcd at
// $REGCTL_BENCH_ETCD, for `go run ./bench reads` to measure kubectl against:
// it writes a kubeconfig for the server to $REGCTL_BENCH_KUBECONFIG and
// serves until its standard input closes. It runs only with REGCTL_BENCH=1;
// upstream's test server is what needs it to be a test, which the bench
// builds with the bench tag (buildKubectlServer). Flags for the
// server, one a line, may come in $REGCTL_BENCH_APISERVER_FLAGS.
func TestServeKubeAPIServer(t *testing.T) {
	if os.Getenv("REGCTL_BENCH") != "1" {
		t.Skip("run by `go run ./bench reads`; set REGCTL_BENCH=1 to run it")
	}
	etcdURL, kubeconfig := os.Getenv("REGCTL_BENCH_ETCD"), os.Getenv("REGCTL_BENCH_KUBECONFIG")
	if etcdURL == "" || kubeconfig == "" {
		t.Fatal("set REGCTL_BENCH_ETCD to an etcd URL and REGCTL_BENCH_KUBECONFIG to the kubeconfig file to write")
	}
	storageConfig := storagebackend.NewDefaultConfig("/registry", nil)
	storageConfig.Transport.ServerList = []string{etcdURL}
	// No controller creates the service accounts that admission plugin
	// requires; the benchmark only reads.
	flags := []string{"--disable-admission-plugins=ServiceAccount"}
	if more := os.Getenv("REGCTL_BENCH_APISERVER_FLAGS"); more != "" {
		flags = append(flags, strings.Split(more, "\n")...)
	}
	server := kubeapiservertesting.StartTestServerOrDie(t, nil, flags, storageConfig)
	t.Cleanup(server.TearDownFn)
	if err := writeKubeconfig(kubeconfig, server.ClientConfig); err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, os.Stdin)
}

// writeKubeconfig writes a kubeconfig for what a client config holds: the
// server, its CA, and a bearer token or a client certificate. It is written
// to a temporary name and renamed, so that a reader never sees half of it.
func writeKubeconfig(path string, c *restclient.Config) error {
	b64 := base64.StdEncoding.EncodeToString
	cluster := map[string]any{"server": c.Host}
	if len(c.TLSClientConfig.CAData) > 0 {
		cluster["certificate-authority-data"] = b64(c.TLSClientConfig.CAData)
	}
	if c.TLSClientConfig.CAFile != "" {
		cluster["certificate-authority"] = c.TLSClientConfig.CAFile
	}
	if c.TLSClientConfig.ServerName != "" {
		cluster["tls-server-name"] = c.TLSClientConfig.ServerName
	}
	if c.TLSClientConfig.Insecure {
		cluster["insecure-skip-tls-verify"] = true
	}
	user := map[string]any{}
	if c.BearerToken != "" {
		user["token"] = c.BearerToken
	}
	if len(c.TLSClientConfig.CertData) > 0 {
		user["client-certificate-data"] = b64(c.TLSClientConfig.CertData)
		user["client-key-data"] = b64(c.TLSClientConfig.KeyData)
	}
	if c.TLSClientConfig.CertFile != "" {
		user["client-certificate"] = c.TLSClientConfig.CertFile
		user["client-key"] = c.TLSClientConfig.KeyFile
	}
	out, err := yaml.Marshal(map[string]any{
		"apiVersion":      "v1",
		"kind":            "Config",
		"clusters":        []any{map[string]any{"name": "bench", "cluster": cluster}},
		"users":           []any{map[string]any{"name": "bench", "user": user}},
		"contexts":        []any{map[string]any{"name": "bench", "context": map[string]any{"cluster": "bench", "user": "bench"}}},
		"current-context": "bench",
	})
	if err != nil {
		return err
	}
	if err := os.WriteFile(path+".tmp", out, 0o600); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}
