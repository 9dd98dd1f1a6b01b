//go:build k8s1.35

package main

import "github.com/prometheus/client_golang/prometheus"

// Kubernetes 1.35 links the first go-grpc-prometheus, whose initialiser
// registers grpc_server_* counters that no server of this process counts
// into: the embedded etcd's own, which the tests read (rangeRequests,
// watchStreams), then fail to register under the same names. The tests take
// the names back for etcd; a collector is unregistered by its metric's
// name.
func init() {
	for _, name := range []string{"grpc_server_started_total", "grpc_server_handled_total", "grpc_server_msg_received_total", "grpc_server_msg_sent_total"} {
		prometheus.Unregister(prometheus.NewCounterVec(prometheus.CounterOpts{Name: name}, nil))
	}
}
