//go:build k8s1.35 || k8s1.36

package apiserver

import kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"

// instanceOptions are the test server's options beyond its flags: before
// Kubernetes 1.37, the test server checks nothing of its own when it stops.
func instanceOptions() *kubeapiservertesting.TestServerInstanceOptions {
	return &kubeapiservertesting.TestServerInstanceOptions{}
}
