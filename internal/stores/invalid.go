package stores

import (
	"cmp"
	"errors"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// inFieldOrder puts the field errors of an Invalid error in the order of
// their fields. A custom resource's schema validator walks the schema's
// properties in Go map order, so the server lists the same errors of the
// same object in a different order from request to request; regctl lists
// them the same way every time. The message is the server's, made again
// from the sorted causes as the server makes it (one cause alone, or
// several in brackets).
func inFieldOrder(err error) error {
	var status *apierrors.StatusError
	if !errors.As(err, &status) || status.ErrStatus.Reason != metav1.StatusReasonInvalid || status.ErrStatus.Details == nil {
		return err
	}
	causes := status.ErrStatus.Details.Causes
	if len(causes) < 2 {
		return err
	}
	prefix, _, ok := strings.Cut(status.ErrStatus.Message, " is invalid: ")
	if !ok {
		return err
	}
	sorted := slices.Clone(causes)
	slices.SortStableFunc(sorted, func(a, b metav1.StatusCause) int {
		return cmp.Or(cmp.Compare(a.Field, b.Field), cmp.Compare(a.Message, b.Message))
	})
	var errs []error
	for _, c := range sorted {
		msg := c.Message
		if c.Field != "" {
			msg = c.Field + ": " + msg
		}
		errs = append(errs, errors.New(msg))
	}
	out := *status
	out.ErrStatus.Details = status.ErrStatus.Details.DeepCopy()
	out.ErrStatus.Details.Causes = sorted
	out.ErrStatus.Message = prefix + " is invalid: " + utilerrors.NewAggregate(errs).Error()
	return &out
}
