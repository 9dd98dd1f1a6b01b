package stores

import (
	"context"
	"fmt"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestWriteOutcomes(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	gr := schema.GroupResource{Resource: "pods"}
	for _, tc := range []struct {
		ctx  context.Context
		err  error
		want Outcome
	}{
		{context.Background(), nil, Done},
		{done, apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "p", nil), Failed},
		{done, apierrors.NewConflict(gr, "p", nil), Failed},
		{done, apierrors.NewNotFound(gr, "p"), Failed},
		{done, apierrors.NewForbidden(gr, "p", nil), Failed},
		{done, context.Canceled, Uncertain},
		{context.Background(), fmt.Errorf("etcd did not answer: %w", context.DeadlineExceeded), Uncertain},
		{context.Background(), apierrors.NewTimeoutError("slow", 1), Uncertain},
		{context.Background(), apierrors.NewInternalError(fmt.Errorf("boom")), Failed},
		// etcd's own errors, as its client hands them on: a member that
		// stopped or a leader that changed may have applied the write.
		{context.Background(), rpctypes.ErrStopped, Uncertain},
		{context.Background(), rpctypes.ErrLeaderChanged, Uncertain},
		{context.Background(), fmt.Errorf("writing: %w", rpctypes.ErrTimeoutDueToLeaderFail), Uncertain},
		// Out of space, etcd refuses the write before it applies it.
		{context.Background(), rpctypes.ErrNoSpace, Failed},
		{context.Background(), rpctypes.ErrGRPCNoSpace, Failed},
	} {
		if got := OutcomeOf(tc.ctx, tc.err); got != tc.want {
			t.Errorf("OutcomeOf(%v): %v, want %v", tc.err, got, tc.want)
		}
	}
}
