package stores

import (
	"context"
	"slices"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/routetable"
)

// Usage accounts for every key under the etcd prefix: each stored resource
// on the etcd that holds it (its `--etcd-servers-overrides` entry, if any),
// and the keys of the main etcd that no path claims, grouped by their next
// path segment. Keys an override moved away, left on the main etcd, are
// unclaimed there: the server never reads them.
//
// main is the client of `--etcd-servers`, handles the map's in table
// order: where several paths store under one prefix (a resource in two
// versions, events in two groups), the keys are the first one's, the one
// kubectl resolves the resource's name to.
func Usage(ctx context.Context, main *clientv3.Client, etcdPrefix string, handles []*handle.Handle, pageSize int64) ([]etcdview.Usage, error) {
	claimed := map[string]string{}
	var elsewhere []etcdview.Usage
	for _, h := range handles {
		r := h.Route
		if r.Store != routetable.StoreOwn {
			continue
		}
		if _, ok := claimed[r.KeyPrefix]; ok {
			continue
		}
		claimed[r.KeyPrefix] = r.Path
		if len(r.EtcdServers) == 0 {
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
	onMain := map[string]string{}
	for prefix, path := range claimed {
		if !slices.ContainsFunc(elsewhere, func(u etcdview.Usage) bool { return u.KeyPrefix == prefix }) {
			onMain[prefix] = path
		}
	}
	usage, err := etcdview.UsageUnder(ctx, main, root, onMain, pageSize)
	if err != nil {
		return nil, err
	}
	usage = append(usage, elsewhere...)
	etcdview.SortUsage(usage)
	return usage, nil
}

// UsageIn is Usage of one namespace: the keys and bytes of each namespaced
// resource in it, read under its prefix in the namespace, on the etcd
// that holds it. Cluster-scoped resources hold nothing in a namespace.
func UsageIn(ctx context.Context, namespace string, handles []*handle.Handle, pageSize int64) ([]etcdview.Usage, error) {
	var out []etcdview.Usage
	seen := map[string]bool{}
	for _, h := range handles {
		if h.Route.Store != routetable.StoreOwn || !h.Resource.Namespaced || seen[h.Route.KeyPrefix] {
			continue
		}
		seen[h.Route.KeyPrefix] = true
		prefix, err := h.KeyPrefix(namespace)
		if err != nil {
			return nil, err
		}
		c, err := h.Client(ctx)
		if err != nil {
			return nil, err
		}
		u, err := etcdview.UsageOf(ctx, c, prefix, h.Path, pageSize)
		if err != nil {
			return nil, err
		}
		u.EtcdServers = h.Route.EtcdServers
		out = append(out, u)
	}
	etcdview.SortUsage(out)
	return out, nil
}
