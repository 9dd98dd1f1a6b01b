package stores

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestInvalidErrorsInFieldOrder: whatever the order the validator found
// them in, the error is the server's own Invalid error of the errors sorted
// by field.
func TestInvalidErrorsInFieldOrder(t *testing.T) {
	size := field.Invalid(field.NewPath("spec", "size"), -1, "must be at least 0")
	color := field.NotSupported(field.NewPath("spec", "color"), "teal", []string{"red", "blue"})
	kind := field.Required(field.NewPath("spec", "kind"), "")
	gk := schema.GroupKind{Group: "example.com", Kind: "Widget"}
	want := apierrors.NewInvalid(gk, "w", field.ErrorList{color, kind, size})
	for _, order := range []field.ErrorList{{size, color, kind}, {kind, size, color}, {color, kind, size}} {
		got := inFieldOrder(apierrors.NewInvalid(gk, "w", order))
		if got.Error() != want.Error() {
			t.Errorf("from %v:\n got %s\nwant %s", order, got, want)
		}
		if !apierrors.IsInvalid(got) || len(got.(*apierrors.StatusError).ErrStatus.Details.Causes) != 3 {
			t.Errorf("from %v: %#v is not the Invalid error with its causes", order, got)
		}
	}
	one := apierrors.NewInvalid(gk, "w", field.ErrorList{size})
	if got := inFieldOrder(one); got.Error() != one.Error() {
		t.Errorf("one cause: %s, want %s", got, one)
	}
}
