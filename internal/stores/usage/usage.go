// Package usage accounts for etcd's keys by the stored resource that holds
// them: what `regctl keys` and `regctl space` count.
package usage

import (
	"context"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/routetable"
)

// Of accounts for every key under the etcd prefix: each stored resource
// on the etcd that holds it (its `--etcd-servers-overrides` entry, if any),
// and the keys of the main etcd that no path claims, grouped by their next
// path segment. Keys an override moved away, left on the main etcd, are
// unclaimed there: the server never reads them.
//
// main is the client of `--etcd-servers`, handles the map's in table
// order: where several paths store under one prefix (a resource in two
// versions, events in two groups), the keys are the first one's, the one
// kubectl resolves the resource's name to.
func Of(ctx context.Context, main *clientv3.Client, etcdPrefix string, handles []*handle.Handle, pageSize int64) ([]etcdview.Usage, error) {
	return Walk(ctx, main, etcdPrefix, handles, etcdview.UsageWalk{PageSize: pageSize})
}

// Walk is Of, read as w says; w's revision is the main etcd's,
// the others are read at their current one.
func Walk(ctx context.Context, main *clientv3.Client, etcdPrefix string, handles []*handle.Handle, w etcdview.UsageWalk) ([]etcdview.Usage, error) {
	holdings, err := Holdings(ctx, main, handles)
	if err != nil {
		return nil, err
	}
	usage, err := etcdview.UsageUnderWalk(ctx, main, Root(etcdPrefix), holdings[0].Claimed, w)
	if err != nil {
		return nil, err
	}
	elsewhere := etcdview.UsageWalk{PageSize: w.PageSize, Visit: w.Visit}
	for _, h := range holdings[1:] {
		for prefix, path := range h.Claimed {
			u, err := etcdview.UsageOfWalk(ctx, h.Client, prefix, path, elsewhere)
			if err != nil {
				return nil, err
			}
			u.EtcdServers = h.Servers
			usage = append(usage, u)
		}
	}
	etcdview.SortUsage(usage)
	return usage, nil
}

// Root is the etcd prefix as the keys under it start: "/registry/".
func Root(etcdPrefix string) string { return strings.TrimSuffix(etcdPrefix, "/") + "/" }

// Holding is an etcd the map's resources are stored on, and the key
// prefixes of the resources it holds.
type Holding struct {
	Client *clientv3.Client
	// Servers are the etcd's `--etcd-servers-overrides` servers; none for
	// the main etcd.
	Servers []string
	// Claimed maps the key prefixes the etcd holds to the path of the
	// resource stored under each.
	Claimed map[string]string
}

// Holdings are the etcds the map's resources are stored on: the main
// one (main, of `--etcd-servers`) first, then one per resource that
// `--etcd-servers-overrides` stores elsewhere, each dialed. Where several
// paths store under one prefix (a resource in two versions, events in two
// groups), the prefix is the first one's, in the map's order: the one
// kubectl resolves the resource's name to.
func Holdings(ctx context.Context, main *clientv3.Client, handles []*handle.Handle) ([]Holding, error) {
	out := []Holding{{Client: main, Claimed: map[string]string{}}}
	seen := map[string]bool{}
	for _, h := range handles {
		r := h.Route
		if r.Store != routetable.StoreOwn || seen[r.KeyPrefix] {
			continue
		}
		seen[r.KeyPrefix] = true
		if len(r.EtcdServers) == 0 {
			out[0].Claimed[r.KeyPrefix] = r.Path
			continue
		}
		c, err := h.Client(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, Holding{Client: c, Servers: r.EtcdServers, Claimed: map[string]string{r.KeyPrefix: r.Path}})
	}
	return out, nil
}

// In is Of for one namespace: the keys and bytes of each namespaced
// resource in it, read under its prefix in the namespace, on the etcd
// that holds it. Cluster-scoped resources hold nothing in a namespace.
func In(ctx context.Context, namespace string, handles []*handle.Handle, pageSize int64) ([]etcdview.Usage, error) {
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
