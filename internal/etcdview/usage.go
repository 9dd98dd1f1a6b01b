package etcdview

import (
	"context"
	"sort"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Usage is how many keys, and how many value bytes, sit under one prefix.
type Usage struct {
	// Resource is the path that owns the prefix; empty for keys no path
	// claims (other API groups, allocator ranges, ...).
	Resource  string `json:"resource,omitempty"`
	KeyPrefix string `json:"keyPrefix"`
	Keys      int64  `json:"keys"`
	Bytes     int64  `json:"bytes"`
	// EtcdServers are set for a resource stored on other servers than the
	// rest (--etcd-servers-overrides).
	EtcdServers []string `json:"etcdServers,omitempty"`
}

// UsageUnder accounts for every key under root. claimed maps key prefixes to
// the resource that owns them; a key counts for the longest prefix it falls
// under, and keys no prefix claims are grouped by the next segment of their
// path (root + "ranges/", root + "apps/", ...). One paged pass over the
// values counts them all, at one revision.
func UsageUnder(ctx context.Context, c *clientv3.Client, root string, claimed map[string]string, pageSize int64) ([]Usage, error) {
	byPrefix := map[string]*Usage{}
	var prefixes []string
	for prefix, resource := range claimed {
		byPrefix[prefix] = &Usage{Resource: resource, KeyPrefix: prefix}
		prefixes = append(prefixes, prefix)
	}
	// Longest first, so services/specs/ wins over a shorter claim.
	sort.Slice(prefixes, func(i, j int) bool { return len(prefixes[i]) > len(prefixes[j]) })

	err := Pages(ctx, c, root, root, pageSize, false, func(kvs []*mvccpb.KeyValue) error {
		for _, kv := range kvs {
			key := string(kv.Key)
			if u := owner(byPrefix, prefixes, key); u != nil {
				u.Keys++
				u.Bytes += int64(len(kv.Value))
				continue
			}
			group := root + firstSegment(strings.TrimPrefix(key, root))
			u, ok := byPrefix[group]
			if !ok {
				u = &Usage{KeyPrefix: group}
				byPrefix[group] = u
			}
			u.Keys++
			u.Bytes += int64(len(kv.Value))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]Usage, 0, len(byPrefix))
	for _, u := range byPrefix {
		out = append(out, *u)
	}
	SortUsage(out)
	return out, nil
}

// UsageOf accounts for the keys of one resource under prefix, on an etcd
// of its own.
func UsageOf(ctx context.Context, c *clientv3.Client, prefix, resource string, pageSize int64) (Usage, error) {
	u := Usage{Resource: resource, KeyPrefix: prefix}
	err := Pages(ctx, c, prefix, prefix, pageSize, false, func(kvs []*mvccpb.KeyValue) error {
		for _, kv := range kvs {
			u.Keys++
			u.Bytes += int64(len(kv.Value))
		}
		return nil
	})
	return u, err
}

// SortUsage puts resources first, by name, then unclaimed groups by prefix.
func SortUsage(out []Usage) {
	sort.Slice(out, func(i, j int) bool {
		if (out[i].Resource == "") != (out[j].Resource == "") {
			return out[i].Resource != ""
		}
		if out[i].Resource != out[j].Resource {
			return out[i].Resource < out[j].Resource
		}
		return out[i].KeyPrefix < out[j].KeyPrefix
	})
}

func owner(byPrefix map[string]*Usage, prefixes []string, key string) *Usage {
	for _, p := range prefixes {
		if strings.HasPrefix(key, p) {
			return byPrefix[p]
		}
	}
	return nil
}

// firstSegment is "ranges/" for "ranges/serviceips", or the whole rest when
// it has no slash.
func firstSegment(rest string) string {
	if i := strings.Index(rest, "/"); i >= 0 {
		return rest[:i+1]
	}
	return rest
}
