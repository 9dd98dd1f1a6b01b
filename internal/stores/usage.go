package stores

import (
	"context"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/wiring"
)

// Usage accounts for every key under the etcd prefix: each stored resource
// on the etcd that holds it (its `--etcd-servers-overrides` entry, if any),
// and the keys of the main etcd that no path claims, grouped by their next
// path segment. Keys an override moved away, left on the main etcd, are
// unclaimed there: the server never reads them.
//
// main is the client of `--etcd-servers`, handles the map's.
func Usage(ctx context.Context, main *clientv3.Client, etcdPrefix string, handles map[string]*wiring.Handle, pageSize int64) ([]etcdview.Usage, error) {
	claimed := map[string]string{}
	var elsewhere []etcdview.Usage
	for _, h := range handles {
		r := h.Route
		if r.Store != routetable.StoreOwn {
			continue
		}
		if len(r.EtcdServers) == 0 {
			claimed[r.KeyPrefix] = r.Path
			continue
		}
		c, err := h.Client(ctx)
		if err != nil {
			return nil, err
		}
		u, err := etcdview.UsageOf(ctx, c, r.KeyPrefix, r.Path, pageSize)
		if err != nil {
			return nil, err
		}
		u.EtcdServers = r.EtcdServers
		elsewhere = append(elsewhere, u)
	}
	root := strings.TrimSuffix(etcdPrefix, "/") + "/"
	usage, err := etcdview.UsageUnder(ctx, main, root, claimed, pageSize)
	if err != nil {
		return nil, err
	}
	usage = append(usage, elsewhere...)
	etcdview.SortUsage(usage)
	return usage, nil
}
