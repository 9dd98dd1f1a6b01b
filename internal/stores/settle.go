package stores

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/regctl/regctl/internal/handle"
)

// settleAttempts bounds how often a write whose answer was lost is read
// back: each read waits for etcd up to the request timeout, long enough
// for a cluster that lost its leader to elect another.
const settleAttempts = 3

// settleCreate tells what became of a create of obj whose answer was lost
// (err, an Uncertain outcome: the member it went through stopped, or its
// leader changed), by reading the key back once etcd answers again, as a
// quorum read: etcd then holds the write or never will. Held, with obj's
// uid, it is the object created; absent, the create is a definite
// failure that says so. When etcd does not answer, or another object of
// that name is there, err stands.
func settleCreate(ctx context.Context, t handle.Target, obj runtime.Object, err error) (runtime.Object, error) {
	m, merr := meta.Accessor(obj)
	if merr != nil || m.GetUID() == "" {
		return nil, err
	}
	// The command may have been interrupted: what was written is still
	// to be told.
	ctx = context.WithoutCancel(ctx)
	for attempt := range settleAttempts {
		if attempt > 0 {
			time.Sleep(100 * time.Millisecond)
		}
		stored, gerr := GetInternal(ctx, t, m.GetName())
		switch {
		case apierrors.IsNotFound(gerr):
			return nil, unwritten(fmt.Errorf("not written: its answer was lost (%w), and etcd, asked again, holds no such object", err))
		case gerr != nil:
			continue
		}
		if sm, serr := meta.Accessor(stored); serr == nil && sm.GetUID() == m.GetUID() {
			return stored, nil
		}
		return nil, err
	}
	return nil, err
}
