package etcdview

import (
	"context"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// PrefixEnd is the end of the range holding every key that starts with prefix.
func PrefixEnd(prefix string) string { return clientv3.GetPrefixRangeEnd(prefix) }

// Count returns how many keys start with prefix, with a count-only request.
func Count(ctx context.Context, c *clientv3.Client, prefix string) (int64, error) {
	resp, err := c.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("counting keys under %s: %w", prefix, err)
	}
	return resp.Count, nil
}

// CountAt returns how many keys start with prefix at revision rev (0: now),
// and the revision counted at, with a count-only request.
func CountAt(ctx context.Context, c *clientv3.Client, prefix string, rev int64) (count, at int64, err error) {
	opts := []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithCountOnly()}
	if rev > 0 {
		opts = append(opts, clientv3.WithRev(rev))
	}
	resp, err := c.Get(ctx, prefix, opts...)
	if err != nil {
		return 0, 0, fmt.Errorf("counting keys under %s: %w", prefix, err)
	}
	if rev == 0 {
		rev = resp.Header.Revision
	}
	return resp.Count, rev, nil
}

// Pages reads the keys under prefix, from start on (start is prefix itself
// for all of them), in pages of at most pageSize, one range request per
// page, all at the revision of the first page so the walk is a consistent
// snapshot. With keysOnly the values are not transferred; with no page size
// (0), every key is read in one request.
func Pages(ctx context.Context, c *clientv3.Client, prefix, start string, pageSize int64, keysOnly bool, fn func([]*mvccpb.KeyValue) error) error {
	return PagesAt(ctx, c, prefix, start, 0, pageSize, keysOnly, fn)
}

// PagesAt is Pages at revision rev; 0 is the revision of the first page.
// Each request after the first reads a bounded window (see windows), so
// etcd counts about a page of keys to answer it, however many keys the
// prefix holds: a walk costs etcd what it reads.
func PagesAt(ctx context.Context, c *clientv3.Client, prefix, start string, rev, pageSize int64, keysOnly bool, fn func([]*mvccpb.KeyValue) error) error {
	w := newWindows(prefix)
	from := start
	limit := pageSize
	// total is how many keys the walk reads, known from the first
	// answer; read, how many it has.
	total, read := int64(-1), int64(0)
	if pageSize <= 0 {
		// No pages: one request for every key (kubectl's
		// --chunk-size=0).
		limit = 0
	} else if !keysOnly {
		// Values may be large: the first page is small, and the next
		// ones as large as pageBytes allows (nextLimit).
		limit = min(pageSize, firstPage)
	}
	for from < w.end {
		to := w.to(from)
		opts := []clientv3.OpOption{clientv3.WithRange(to), clientv3.WithLimit(limit)}
		if keysOnly {
			opts = append(opts, clientv3.WithKeysOnly())
		}
		if rev > 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := c.Get(ctx, from, opts...)
		if err != nil {
			return fmt.Errorf("reading keys under %s: %w", prefix, err)
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		kvs := resp.Kvs
		more := resp.More && len(kvs) > 0
		next, first, last := to, "", ""
		if len(kvs) > 0 {
			first, last = string(kvs[0].Key), string(kvs[len(kvs)-1].Key)
		}
		if more {
			// The next page starts just after the last key of this one.
			next = last + "\x00"
		}
		if !keysOnly && limit > 0 {
			limit = nextLimit(kvs, limit, pageSize)
		}
		// Windows are cut to hold a few pages, so that a window whose
		// keys are sparser than the last one's still fills its page:
		// etcd counts a few pages' keys for each, and answers with one.
		w.answered(from, to, resp.Count, int64(len(kvs)), first, last, more, windowPages*limit)
		if len(kvs) > 0 {
			if err := fn(kvs); err != nil {
				return err
			}
		}
		if total < 0 {
			// The first request reads to the end of the prefix: its
			// count, at the walk's revision, is what the walk reads.
			total = resp.Count
		}
		if read += int64(len(kvs)); read >= total {
			return nil
		}
		from = next
	}
	return nil
}

// pageBytes is about how many bytes of values a page holds at most: keys
// of one resource are alike in size, and a page of 2,500 CRDs of 100 KiB
// each would hold a quarter of a GiB, twice over (the response, and its
// decoding). Under 1 MiB a response fits the largest buffer gRPC pools and
// reuses; each larger one gets a buffer of its own, which gRPC's pool then
// holds until the collector runs twice (tens of MiB over a pass of 8 MiB
// pages). A page is still hundreds of objects of common size.
const pageBytes = 768 << 10

// firstPage is how many values the first page of a pass reads.
const firstPage = 64

// nextLimit is the size of the page after kvs, read with limit: about
// pageBytes of values like those of kvs, at most twice limit, and at most
// pageSize. An empty page (a window between keys) says nothing of the
// values to come and leaves the limit as it is: doubled over a run of
// empty windows, it would let the next page read thousands of large
// values in one response.
func nextLimit(kvs []*mvccpb.KeyValue, limit, pageSize int64) int64 {
	if len(kvs) == 0 {
		return limit
	}
	var size int64
	for _, kv := range kvs {
		size += int64(len(kv.Key) + len(kv.Value))
	}
	next := 2 * limit
	if size > 0 {
		next = min(next, limit*pageBytes/size)
	}
	return max(1, min(pageSize, next))
}

// Value reads one key; nil when it does not exist.
func Value(ctx context.Context, c *clientv3.Client, key string) (*mvccpb.KeyValue, error) {
	return ValueAt(ctx, c, key, 0)
}

// ValueAt reads one key as it was at revision rev (0: now); nil when it did
// not exist then.
func ValueAt(ctx context.Context, c *clientv3.Client, key string, rev int64) (*mvccpb.KeyValue, error) {
	var opts []clientv3.OpOption
	if rev > 0 {
		opts = append(opts, clientv3.WithRev(rev))
	}
	resp, err := c.Get(ctx, key, opts...)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", key, err)
	}
	if len(resp.Kvs) == 0 {
		return nil, nil
	}
	return resp.Kvs[0], nil
}

// FirstValues reads the first n keys under prefix with their values, in
// one request.
func FirstValues(ctx context.Context, c *clientv3.Client, prefix string, n int64) ([]*mvccpb.KeyValue, error) {
	resp, err := c.Get(ctx, prefix, clientv3.WithRange(PrefixEnd(prefix)), clientv3.WithLimit(n))
	if err != nil {
		return nil, fmt.Errorf("reading keys under %s: %w", prefix, err)
	}
	return resp.Kvs, nil
}

// LeaseTTL returns the seconds left on a lease, or -1 when it has expired.
func LeaseTTL(ctx context.Context, c *clientv3.Client, lease int64) (int64, error) {
	resp, err := c.TimeToLive(ctx, clientv3.LeaseID(lease))
	if err != nil {
		return 0, fmt.Errorf("reading lease %x: %w", lease, err)
	}
	return resp.TTL, nil
}
