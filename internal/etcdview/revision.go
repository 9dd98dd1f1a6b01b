package etcdview

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// CompactedError is a revision etcd no longer holds: it was compacted.
type CompactedError struct {
	Revision int64
	// Oldest is the oldest revision etcd still holds, its last compaction.
	Oldest int64
}

func (e *CompactedError) Error() string {
	return fmt.Sprintf("revision %d has been compacted: the oldest revision etcd holds is %d", e.Revision, e.Oldest)
}

// FutureError is a revision etcd has not reached yet.
type FutureError struct {
	Revision int64
	Current  int64
}

func (e *FutureError) Error() string {
	return fmt.Sprintf("revision %d is in the future: etcd's current revision is %d", e.Revision, e.Current)
}

// CheckRevision tells whether the keyspace can be read at rev: a
// CompactedError or a FutureError when it cannot. It asks with a
// count-only range at rev, which writes nothing.
func CheckRevision(ctx context.Context, c *clientv3.Client, rev int64) error {
	if rev <= 0 {
		return fmt.Errorf("revision %d: etcd revisions start at 1", rev)
	}
	_, err := c.Get(ctx, "\x00", clientv3.WithCountOnly(), clientv3.WithRev(rev))
	switch {
	case errors.Is(err, rpctypes.ErrCompacted):
		oldest, err := OldestRevision(ctx, c)
		if err != nil {
			return err
		}
		return &CompactedError{Revision: rev, Oldest: oldest}
	case errors.Is(err, rpctypes.ErrFutureRev):
		current, err := Revision(ctx, c)
		if err != nil {
			return err
		}
		return &FutureError{Revision: rev, Current: current}
	case err != nil:
		return fmt.Errorf("reading etcd at revision %d: %w", rev, err)
	}
	return nil
}

// OldestRevision is the oldest revision etcd can still be read at: 1 when
// it never compacted, else its last compaction's revision, which stays
// readable. etcd tells that revision only to a watch that starts before
// it, which it cancels at once; a watch writes nothing.
func OldestRevision(ctx context.Context, c *clientv3.Client) (int64, error) {
	_, err := c.Get(ctx, "\x00", clientv3.WithCountOnly(), clientv3.WithRev(1))
	if err == nil {
		return 1, nil
	}
	if !errors.Is(err, rpctypes.ErrCompacted) {
		return 0, fmt.Errorf("reading etcd at revision 1: %w", err)
	}
	timeout := requestTimeout(c)
	ctx, cancel := WithRequestTimeout(clientv3.WithRequireLeader(ctx), timeout)
	defer cancel()
	for resp := range c.Watch(ctx, "\x00", clientv3.WithRev(1)) {
		if resp.CompactRevision > 0 {
			return resp.CompactRevision, nil
		}
		if err := resp.Err(); err != nil {
			return 0, fmt.Errorf("finding etcd's last compaction: %w", err)
		}
	}
	if ctx.Err() != nil {
		return 0, RequestError(ctx, timeout, context.Cause(ctx))
	}
	return 0, errors.New("finding etcd's last compaction: the watch ended without saying")
}

// ValidRevision refuses a `--revision` no etcd can have, before anything
// is dialed: revisions start at 1, and 0 means now.
func ValidRevision(rev int64) error {
	if rev < 0 {
		return fmt.Errorf("invalid `--revision` %d: etcd revisions start at 1", rev)
	}
	return nil
}

// CheckRevisionOn tells, before anything is read, whether the etcd that
// dial reaches can still be read at `--revision` rev: a compacted or future
// revision is one line naming the revisions that can be. Revision 0 is now,
// with nothing to check and nothing dialed; a negative one is refused
// before dialing.
func CheckRevisionOn(ctx context.Context, dial func(context.Context) (*clientv3.Client, error), rev int64) error {
	if rev == 0 {
		return nil
	}
	if err := ValidRevision(rev); err != nil {
		return err
	}
	c, err := dial(ctx)
	if err != nil {
		return err
	}
	return CheckRevision(ctx, c, rev)
}
