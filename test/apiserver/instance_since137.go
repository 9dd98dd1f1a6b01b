//go:build !k8s1.35 && !k8s1.36

package apiserver

import kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"

// instanceOptions are the test server's options beyond its flags. From
// Kubernetes 1.37 the test server checks its own metrics' invariants when
// it stops: a test of the server, not of regctl, and a quarter of a
// second of CPU for each server the tests start.
func instanceOptions() *kubeapiservertesting.TestServerInstanceOptions {
	return &kubeapiservertesting.TestServerInstanceOptions{DisableInvariantChecks: true}
}
