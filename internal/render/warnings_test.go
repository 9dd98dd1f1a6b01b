package render

import (
	"bytes"
	"context"
	"testing"

	"k8s.io/apiserver/pkg/warning"
)

// TestWithWarnings prints what the server's code warns of as kubectl
// prints warning headers: each text once.
func TestWithWarnings(t *testing.T) {
	var errOut bytes.Buffer
	ctx := WithWarnings(context.Background(), &errOut)
	warning.AddWarning(ctx, "", "policy/v1beta1 PodDisruptionBudget is deprecated")
	warning.AddWarning(ctx, "", "policy/v1beta1 PodDisruptionBudget is deprecated")
	warning.AddWarning(ctx, "", "spec.foo is unknown")
	want := "Warning: policy/v1beta1 PodDisruptionBudget is deprecated\nWarning: spec.foo is unknown\n"
	if errOut.String() != want {
		t.Errorf("warnings %q, want %q", errOut.String(), want)
	}
}
