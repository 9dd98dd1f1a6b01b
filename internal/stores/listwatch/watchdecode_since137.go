//go:build !k8s1.35 && !k8s1.36

package listwatch

import "k8s.io/apiserver/pkg/storage/etcd3"

// watchDecodeErrorsAsEvents makes a watch send an error event for a value
// it cannot decode, where upstream's tests (KUBE_PANIC_WATCH_DECODE_ERROR)
// make it panic. Kubernetes 1.37 scopes the setting to a test, which
// puts it back at its end: regctl's holds for the process.
func watchDecodeErrorsAsEvents() { etcd3.TestOnlySetFatalOnDecodeError(forTheProcess{}, false) }

// forTheProcess is the scope of a setting that is never put back.
type forTheProcess struct{}

func (forTheProcess) Helper()        {}
func (forTheProcess) Cleanup(func()) {}
