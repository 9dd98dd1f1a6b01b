package etcdview

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/regctl/regctl/internal/etcdview/etcdtest"
)

// countingKV adds up what etcd says it counted for each range request made
// through it: the keys it visited to answer.
type countingKV struct {
	clientv3.KV
	mu       sync.Mutex
	counted  int64
	requests int
}

func (c *countingKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	resp, err := c.KV.Get(ctx, key, opts...)
	if err == nil {
		c.mu.Lock()
		c.counted += resp.Count
		c.requests++
		c.mu.Unlock()
	}
	return resp, err
}

// TestWalksCountWhatTheyRead walks prefixes of real etcd whose keys are
// laid out as clusters lay them out (namespaces of many objects, a few
// lone keys, names longer than a window's digits, gaps) and checks that
// every key comes once, in order, at one revision, while etcd counts a
// bounded multiple of the keys: a walk that asked for the rest of the
// prefix page after page would make it count about n²/2p.
func TestWalksCountWhatTheyRead(t *testing.T) {
	e, c := etcdtest.Start(t)
	ctx := context.Background()

	var want []string
	put := func(keys ...string) {
		t.Helper()
		var ops []clientv3.Op
		for _, k := range keys {
			ops = append(ops, clientv3.OpPut(k, "v"))
			if len(ops) == 100 {
				if _, err := c.Txn(ctx).Then(ops...).Commit(); err != nil {
					t.Fatal(err)
				}
				ops = ops[:0]
			}
		}
		if len(ops) > 0 {
			if _, err := c.Txn(ctx).Then(ops...).Commit(); err != nil {
				t.Fatal(err)
			}
		}
		want = append(want, keys...)
	}
	const prefix = "/registry/pods/"
	// Twenty namespaces of 500 pods, three of them far apart.
	for ns := range 20 {
		var keys []string
		for i := range 500 {
			keys = append(keys, fmt.Sprintf("%sns-%02d/app-%d-7d9f8b6c5d-%05d", prefix, ns*ns, ns, i*7919%100000))
		}
		put(keys...)
	}
	// Lone keys before, between and after them.
	put(prefix+"a", prefix+"ns-05x/one", prefix+"zzz/last", prefix+"\x01low", prefix+"\xfe\xff high")
	// 300 names that share a start longer than a window reads.
	long := strings.Repeat("x", windowDigits+10)
	var longKeys []string
	for i := range 300 {
		longKeys = append(longKeys, fmt.Sprintf("%slong/%s-%03d", prefix, long, i))
	}
	put(longKeys...)
	// Keys beside the prefix, which no walk of it reads.
	if _, err := c.Put(ctx, "/registry/pods", "beside"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx, "/registry/podsecurity/x", "beside"); err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	n := int64(len(want))

	for _, tc := range []struct {
		pageSize int64
		keysOnly bool
	}{{100, true}, {37, true}, {500, false}, {3, true}} {
		t.Run(fmt.Sprintf("pages of %d, keys only %v", tc.pageSize, tc.keysOnly), func(t *testing.T) {
			walker := etcdtest.Client(t, e.ClientURL)
			counting := &countingKV{KV: walker.KV}
			walker.KV = counting
			var got []string
			rev, err := Revision(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			// Written during the walk, after its revision: not read.
			if _, err := c.Put(ctx, prefix+"ns-00/written-after", "v"); err != nil {
				t.Fatal(err)
			}
			defer c.Delete(ctx, prefix+"ns-00/written-after")
			err = PagesAt(ctx, walker, prefix, prefix, rev, tc.pageSize, tc.keysOnly, func(kvs []*mvccpb.KeyValue) error {
				if int64(len(kvs)) > tc.pageSize {
					t.Errorf("a page of %d keys, more than %d", len(kvs), tc.pageSize)
				}
				for _, kv := range kvs {
					got = append(got, string(kv.Key))
					if tc.keysOnly != (len(kv.Value) == 0) {
						t.Errorf("%s: value %q with keys only %v", kv.Key, kv.Value, tc.keysOnly)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("walked %d keys, want %d: first differences %v", len(got), len(want), firstDifferences(got, want))
			}
			// The first request counts every key; the others about a
			// page each, with room for windows that overshoot where the
			// keys' density changes: a bounded multiple of the keys,
			// where asking for the rest of the prefix page after page
			// counts n²/2p (530,000 for pages of 100 here, 17 million
			// for pages of 3).
			if bound := 20 * n; counting.counted > bound {
				t.Errorf("etcd counted %d keys over %d requests to walk %d: more than %d", counting.counted, counting.requests, n, bound)
			}
			t.Logf("%d keys, %d requests, %d counted", n, counting.requests, counting.counted)
		})
	}
}

func firstDifferences(got, want []string) []string {
	var out []string
	for i := 0; i < max(len(got), len(want)) && len(out) < 3; i++ {
		g, w := "<none>", "<none>"
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			out = append(out, fmt.Sprintf("#%d got %q want %q", i, g, w))
		}
	}
	return out
}

// TestPagesStayBoundedAcrossGaps walks values of 16 KiB in two groups far
// apart, as a cluster's CRDs and the resources after them are: the windows
// between the groups hold no key, and what the page after them reads is
// still about pageBytes, as before the gap. An empty window says nothing
// of the values to come: a walk that doubled its page at each read a
// thousand values of the second group in one response.
func TestPagesStayBoundedAcrossGaps(t *testing.T) {
	e, c := etcdtest.Start(t)
	ctx := context.Background()
	const prefix, size = "/registry/", 16 << 10
	value := strings.Repeat("v", size)
	for group, n := range map[string]int{"apiextensions.k8s.io/crds/": 200, "zz/things/": 1000} {
		var ops []clientv3.Op
		for i := range n {
			ops = append(ops, clientv3.OpPut(fmt.Sprintf("%s%s%04d", prefix, group, i), value))
			if len(ops) == 50 { // within etcd's 1.5 MiB a request
				if _, err := c.Txn(ctx).Then(ops...).Commit(); err != nil {
					t.Fatal(err)
				}
				ops = ops[:0]
			}
		}
	}
	walker := etcdtest.Client(t, e.ClientURL)
	counting := &countingKV{KV: walker.KV}
	walker.KV = counting
	var pages, read int
	err := Pages(ctx, walker, prefix, prefix, 10000, false, func(kvs []*mvccpb.KeyValue) error {
		pages++
		read += len(kvs)
		// The first page is firstPage values; the others about
		// pageBytes, at most twice the page before them.
		if bytes := len(kvs) * size; pages > 1 && bytes > 2*pageBytes {
			t.Errorf("page %d: %d values, %d KiB: more than twice %d KiB", pages, len(kvs), bytes>>10, pageBytes>>10)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if read != 1200 {
		t.Fatalf("read %d values, want 1200", read)
	}
	t.Logf("%d pages in %d requests", pages, counting.requests)
}
