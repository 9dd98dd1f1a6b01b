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

// UsageWalk is how a usage pass reads its keys: at which revision (0:
// the first page's), in pages of how many, and, when Visit is set, what
// it is told of each key: the key with its value, and the usage it is
// counted in.
type UsageWalk struct {
	Revision, PageSize int64
	Visit              func(kv *mvccpb.KeyValue, u *Usage) error
}

// UsageUnder accounts for every key under root. claimed maps key prefixes to
// the resource that owns them; a key counts for the longest prefix it falls
// under, and keys no prefix claims are grouped by the next segment of their
// path (root + "ranges/", root + "apps/", ...). One paged pass over the
// values counts them all, at one revision.
func UsageUnder(ctx context.Context, c *clientv3.Client, root string, claimed map[string]string, pageSize int64) ([]Usage, error) {
	return UsageUnderWalk(ctx, c, root, claimed, UsageWalk{PageSize: pageSize})
}

// UsageUnderWalk is UsageUnder, read as w says.
func UsageUnderWalk(ctx context.Context, c *clientv3.Client, root string, claimed map[string]string, w UsageWalk) ([]Usage, error) {
	claims := NewClaims(root, claimed)
	byPrefix := map[string]*Usage{}
	for prefix, resource := range claimed {
		byPrefix[prefix] = &Usage{Resource: resource, KeyPrefix: prefix}
	}
	err := PagesAt(ctx, c, root, root, w.Revision, w.PageSize, false, func(kvs []*mvccpb.KeyValue) error {
		for _, kv := range kvs {
			prefix, resource := claims.Group(string(kv.Key))
			u, ok := byPrefix[prefix]
			if !ok {
				u = &Usage{Resource: resource, KeyPrefix: prefix}
				byPrefix[prefix] = u
			}
			u.Keys++
			u.Bytes += int64(len(kv.Value))
			if w.Visit != nil {
				if err := w.Visit(kv, u); err != nil {
					return err
				}
			}
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
	return UsageOfWalk(ctx, c, prefix, resource, UsageWalk{PageSize: pageSize})
}

// UsageOfWalk is UsageOf, read as w says.
func UsageOfWalk(ctx context.Context, c *clientv3.Client, prefix, resource string, w UsageWalk) (Usage, error) {
	u := Usage{Resource: resource, KeyPrefix: prefix}
	err := PagesAt(ctx, c, prefix, prefix, w.Revision, w.PageSize, false, func(kvs []*mvccpb.KeyValue) error {
		for _, kv := range kvs {
			u.Keys++
			u.Bytes += int64(len(kv.Value))
			if w.Visit != nil {
				if err := w.Visit(kv, &u); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return u, err
}

// Claims tells which usage a key is counted in: the resource whose key
// prefix is the longest it falls under, or for a key under root that no
// prefix claims, the group of the next segment of its path.
type Claims struct {
	root     string
	prefixes []string // longest first
	claimed  map[string]string
}

// NewClaims are the claims of the prefixes claimed (prefix to resource)
// under root.
func NewClaims(root string, claimed map[string]string) *Claims {
	c := &Claims{root: root, claimed: claimed}
	for prefix := range claimed {
		c.prefixes = append(c.prefixes, prefix)
	}
	// Longest first, so services/specs/ wins over a shorter claim.
	sort.Slice(c.prefixes, func(i, j int) bool { return len(c.prefixes[i]) > len(c.prefixes[j]) })
	return c
}

// Group is the key prefix key is counted under, and the resource that
// claims it (empty for an unclaimed group). A key outside root is in no
// group: both are empty.
func (c *Claims) Group(key string) (prefix, resource string) {
	for _, p := range c.prefixes {
		if strings.HasPrefix(key, p) {
			return p, c.claimed[p]
		}
	}
	if !strings.HasPrefix(key, c.root) {
		return "", ""
	}
	return c.root + firstSegment(strings.TrimPrefix(key, c.root)), ""
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

// firstSegment is "ranges/" for "ranges/serviceips", or the whole rest when
// it has no slash.
func firstSegment(rest string) string {
	if i := strings.Index(rest, "/"); i >= 0 {
		return rest[:i+1]
	}
	return rest
}
