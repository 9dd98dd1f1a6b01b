package stores

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regctl/regctl/internal/etcdview"
)

// Outcome is what became of one write, as far as regctl can know.
type Outcome int

const (
	// Done: the store wrote (or, dry run, would have written) the object.
	Done Outcome = iota
	// Failed: nothing was written; the error says why.
	Failed
	// Uncertain: the write was sent but its answer never came (a timeout,
	// an interrupt, an etcd that stopped answering), so etcd may have
	// applied it.
	Uncertain
)

// OutcomeOf tells from the error of a Create, Update or Delete whether the
// write happened. A refusal by the store (an API error such as Invalid,
// AlreadyExists, Conflict, NotFound or Forbidden) or a failure before the
// write was sent is definite; a write cut short while in flight is not.
func OutcomeOf(ctx context.Context, err error) Outcome {
	if err == nil {
		return Done
	}
	var before *unwrittenError
	// etcd out of space refuses the write before applying it, with the
	// code a request cut short also has (ResourceExhausted).
	if errors.As(err, &before) || refused(err) || etcdview.NoSpace(err) {
		return Failed
	}
	if ctx.Err() != nil || unanswered(err) {
		return Uncertain
	}
	return Failed
}

// refused is an API error in which the store says no to the request itself,
// as opposed to a timeout or an internal error, after which the write may
// still have been applied.
func refused(err error) bool {
	switch apierrors.ReasonForError(err) {
	case metav1.StatusReasonInvalid, metav1.StatusReasonAlreadyExists, metav1.StatusReasonConflict,
		metav1.StatusReasonNotFound, metav1.StatusReasonForbidden, metav1.StatusReasonBadRequest,
		metav1.StatusReasonMethodNotAllowed, metav1.StatusReasonGone, metav1.StatusReasonUnauthorized,
		metav1.StatusReasonRequestEntityTooLarge, metav1.StatusReasonNotAcceptable,
		metav1.StatusReasonUnsupportedMediaType:
		return true
	}
	return false
}

// unwrittenError marks a failure that happened before anything was sent to
// be written, so that it counts as definite even when the command was
// interrupted at the time.
type unwrittenError struct{ err error }

func (e *unwrittenError) Error() string { return e.err.Error() }
func (e *unwrittenError) Unwrap() error { return e.err }

func unwritten(err error) error {
	if err == nil {
		return nil
	}
	return &unwrittenError{err: err}
}
