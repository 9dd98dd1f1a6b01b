package manifest

import (
	"encoding/json"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

func TestDecodeErrorSpeaksTheManifestsTerms(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want string
	}{
		{`{"spec":{"containers":"busybox"}}`, "spec.containers: expected a list, got a string"},
		{`{"spec":{"containers":[{"name":"c","ports":[{"containerPort":"80"}]}]}}`, "spec.containers.ports.containerPort: expected a 32-bit integer, got a string"},
		{`{"spec":{"containers":[{"name":"c","ports":[{"containerPort":1.5}]}]}}`, "spec.containers.ports.containerPort: expected a 32-bit integer, got 1.5"},
		{`{"metadata":{"labels":["app"]}}`, "metadata.labels: expected an object, got a list"},
		{`{"spec":{"hostNetwork":"yes"}}`, "spec.hostNetwork: expected true or false, got a string"},
		{`{"spec":{"nodeName":true}}`, "spec.nodeName: expected a string, got a boolean"},
		{`{"spec":{"activeDeadlineSeconds":{}}}`, "spec.activeDeadlineSeconds: expected a 64-bit integer, got an object"},
	} {
		// The apiserver's decoder (sigs.k8s.io/json) and encoding/json
		// describe the error with the same fields.
		for name, unmarshal := range map[string]func([]byte, any) error{"apiserver": utiljson.Unmarshal, "encoding/json": json.Unmarshal} {
			err := unmarshal([]byte(tc.doc), &corev1.Pod{})
			if err == nil {
				t.Fatalf("%s: %s decoded", name, tc.doc)
			}
			got := DecodeError(fmt.Errorf("decoding: %w", err))
			if got.Error() != tc.want {
				t.Errorf("%s: %s: got %q, want %q (from %q)", name, tc.doc, got, tc.want, err)
			}
		}
	}
}

func TestDecodeErrorKeepsOtherErrors(t *testing.T) {
	err := json.Unmarshal([]byte(`{"spec":`), &corev1.Pod{})
	if got := DecodeError(err); got != err {
		t.Errorf("a syntax error became %q", got)
	}
}
