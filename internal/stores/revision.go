package stores

import (
	"context"
	"errors"
	"fmt"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
)

// ErrWriteAtRevision refuses `--revision` on a write: etcd writes at its
// current revision only.
var ErrWriteAtRevision = errors.New("`--revision` is for reads: a write always goes to etcd's current revision (to bring back an old version, `regctl get ... --revision N -o yaml` and create or replace from that)")

// CheckRevision tells, before anything is read, whether the etcd that holds
// t (its `--etcd-servers-overrides` entry, if any) can still be read at
// `--revision` rev; 0 is now, with nothing to check.
func CheckRevision(ctx context.Context, t handle.Target, rev int64) error {
	return etcdview.CheckRevisionOn(ctx, t.Client, rev)
}

// CheckRevisions is CheckRevision for each target, in order.
func CheckRevisions(ctx context.Context, targets []handle.Target, rev int64) error {
	for _, t := range targets {
		if err := CheckRevision(ctx, t, rev); err != nil {
			return err
		}
	}
	return nil
}

// CheckChunkSize refuses a negative `--chunk-size`, which has no meaning;
// 0 turns paging off.
func CheckChunkSize(n int64) error {
	if n < 0 {
		return fmt.Errorf("`--chunk-size` must be 0 (no paging) or more, not %d", n)
	}
	return nil
}
