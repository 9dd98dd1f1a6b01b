package etcdview

import (
	"context"
	"errors"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/regctl/regctl/internal/etcdview/etcdtest"
)

// TestCheckRevisionOn reads a real etcd at revisions it holds, compacted
// and not reached yet; revision 0 and negative ones dial nothing.
func TestCheckRevisionOn(t *testing.T) {
	_, c := etcdtest.Start(t)
	ctx := context.Background()
	var revs []int64
	for _, v := range []string{"a", "b", "c"} {
		resp, err := c.Put(ctx, "/registry/configmaps/a/x", v)
		if err != nil {
			t.Fatal(err)
		}
		revs = append(revs, resp.Header.Revision)
	}
	if _, err := c.Compact(ctx, revs[1]); err != nil {
		t.Fatal(err)
	}
	dialed := 0
	dial := func(context.Context) (*clientv3.Client, error) { dialed++; return c, nil }
	noDial := func(context.Context) (*clientv3.Client, error) {
		t.Error("dialed etcd for a revision that needs no etcd")
		return nil, errors.New("no etcd")
	}

	if err := CheckRevisionOn(ctx, noDial, 0); err != nil {
		t.Errorf("revision 0: %v", err)
	}
	if err := CheckRevisionOn(ctx, noDial, -1); err == nil || err.Error() != "invalid `--revision` -1: etcd revisions start at 1" {
		t.Errorf("revision -1: %v", err)
	}
	if err := CheckRevisionOn(ctx, dial, revs[2]); err != nil {
		t.Errorf("the current revision: %v", err)
	}
	var compacted *CompactedError
	if err := CheckRevisionOn(ctx, dial, revs[0]); !errors.As(err, &compacted) || compacted.Oldest != revs[1] {
		t.Errorf("a compacted revision: %v, want a CompactedError naming %d", err, revs[1])
	}
	var future *FutureError
	if err := CheckRevisionOn(ctx, dial, revs[2]+10); !errors.As(err, &future) || future.Current != revs[2] {
		t.Errorf("a future revision: %v, want a FutureError naming %d", err, revs[2])
	}
	if dialed != 3 {
		t.Errorf("dialed %d times, want once per revision checked", dialed)
	}
}
