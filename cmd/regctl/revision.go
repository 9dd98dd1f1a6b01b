package main

import (
	"context"
	"errors"
	"fmt"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/stores"
)

// errWriteAtRevision refuses `--revision` on a write: etcd writes at its
// current revision only.
var errWriteAtRevision = errors.New("`--revision` is for reads: a write always goes to etcd's current revision (to bring back an old version, `regctl get ... --revision N -o yaml` and create or replace from that)")

// checkRevision tells, before anything is read, whether the etcd that holds
// t can still be read at `--revision`: a compacted or future revision is
// one line naming the revisions that can be. Without `--revision` there is
// nothing to check.
func (g *globalOptions) checkRevision(ctx context.Context, t stores.Target) error {
	return g.checkRevisionOn(ctx, t.Client)
}

// checkRevisionOn is checkRevision on the etcd client gives.
func (g *globalOptions) checkRevisionOn(ctx context.Context, client func(context.Context) (*clientv3.Client, error)) error {
	switch {
	case g.Revision == 0:
		return nil
	case g.Revision < 0:
		return fmt.Errorf("invalid `--revision` %d: etcd revisions start at 1", g.Revision)
	}
	c, err := client(ctx)
	if err != nil {
		return err
	}
	return etcdview.CheckRevision(ctx, c, g.Revision)
}
