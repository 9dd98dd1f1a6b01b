//go:build k8s1.35 || k8s1.36

package listwatch

import "k8s.io/apiserver/pkg/storage/etcd3"

// watchDecodeErrorsAsEvents makes a watch send an error event for a value
// it cannot decode, where upstream's tests (KUBE_PANIC_WATCH_DECODE_ERROR)
// make it panic.
func watchDecodeErrorsAsEvents() { etcd3.TestOnlySetFatalOnDecodeError(false) }
