package main

import (
	"strings"
	"testing"
	"time"

	api "k8s.io/kubernetes/pkg/apis/core"
)

// A shell set up for etcdctl works as it is: its endpoints and TLS files
// stand in for the flags not given, and a flag always wins.
func TestEtcdctlEnvironmentStandsInForFlags(t *testing.T) {
	s := newLiveEtcd(t)
	s.createPods(t, "shop", 1, func(i int, p *api.Pod) { p.Name = "web" })

	t.Run("endpoints", func(t *testing.T) {
		t.Setenv("ETCDCTL_ENDPOINTS", s.url)
		stdout, stderr, code := run(t, "get", "pods", "-n", "shop", "-o", "name")
		if code != 0 || stdout != "pod/web\n" {
			t.Errorf("exit %d, stdout %q, stderr %q: want pod/web", code, stdout, stderr)
		}
	})
	t.Run("a flag wins", func(t *testing.T) {
		t.Setenv("ETCDCTL_ENDPOINTS", closedPort(t))
		stdout, stderr, code := run(t, "get", "pods", "-n", "shop", "-o", "name", s.flag())
		if code != 0 || stdout != "pod/web\n" {
			t.Errorf("exit %d, stdout %q, stderr %q: want pod/web from the flag's etcd", code, stdout, stderr)
		}
	})
	t.Run("TLS files", func(t *testing.T) {
		tlsEtcd := newTLSEtcd(t)
		t.Setenv("ETCDCTL_ENDPOINTS", tlsEtcd.url)
		t.Setenv("ETCDCTL_CACERT", tlsEtcd.ca.certFile)
		t.Setenv("ETCDCTL_CERT", tlsEtcd.client.certFile)
		t.Setenv("ETCDCTL_KEY", tlsEtcd.client.keyFile)
		_, stderr, code := runWithin(t, 20*time.Second, "get", "pods")
		if code != 0 || !strings.Contains(stderr, "No resources found") {
			t.Errorf("exit %d, stderr %q: want an empty list over TLS", code, stderr)
		}
		t.Setenv("ETCDCTL_CERT", "")
		t.Setenv("ETCDCTL_KEY", "")
		_, stderr, code = runWithin(t, 20*time.Second, "get", "pods")
		if code == 0 || !strings.Contains(stderr, "certificate required") {
			t.Errorf("exit %d, stderr %q: without the client certificate the server must refuse", code, stderr)
		}
	})
}
