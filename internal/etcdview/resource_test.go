package etcdview

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apiserver/pkg/storage/value"

	"github.com/regctl/regctl/internal/etcdview/etcdtest"
)

// prefixResource is a resource whose keys are prefix+name, read through c.
type prefixResource struct {
	c      *clientv3.Client
	prefix string
}

func (r prefixResource) Client(context.Context) (*clientv3.Client, error) { return r.c, nil }
func (r prefixResource) Key(_, name string) (string, error)               { return r.prefix + name, nil }
func (r prefixResource) KeyPrefix(string) (string, error)                 { return r.prefix, nil }
func (r prefixResource) Transformer() value.Transformer                   { return nil }

// TestKeysReadTheNextPageWhileOneIsPrinted: every key comes once, in order;
// the next window is asked of etcd while fn still holds a page; an error of
// fn stops the walk and is what Keys returns.
func TestKeysReadTheNextPageWhileOneIsPrinted(t *testing.T) {
	e, c := etcdtest.Start(t)
	ctx := context.Background()
	const prefix = "/registry/configmaps/"
	var want []string
	for ns := range 4 {
		var ops []clientv3.Op
		for i := range 50 {
			key := fmt.Sprintf("%sns-%d/cm-%03d", prefix, ns, i)
			want = append(want, key)
			ops = append(ops, clientv3.OpPut(key, "v"))
		}
		if _, err := c.Txn(ctx).Then(ops...).Commit(); err != nil {
			t.Fatal(err)
		}
	}
	walker := etcdtest.Client(t, e.ClientURL)
	counting := &countingKV{KV: walker.KV}
	walker.KV = counting
	requests := func() int {
		counting.mu.Lock()
		defer counting.mu.Unlock()
		return counting.requests
	}

	var got []string
	err := Keys(ctx, prefixResource{c: walker, prefix: prefix}, "", 0, 20, func(keys []string) error {
		if len(got) == 0 {
			// The first page is held until the walk has asked for the
			// next one.
			deadline := time.Now().Add(5 * time.Second)
			for requests() < 2 {
				if time.Now().After(deadline) {
					return errors.New("the next page was not read while the first was held")
				}
				time.Sleep(time.Millisecond)
			}
		}
		got = append(got, keys...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("read %d keys %q..., want the %d written, in order", len(got), got[:min(3, len(got))], len(want))
	}

	stop := errors.New("stop")
	pages := 0
	err = Keys(ctx, prefixResource{c: walker, prefix: prefix}, "", 0, 20, func([]string) error {
		pages++
		return stop
	})
	if !errors.Is(err, stop) || pages != 1 {
		t.Fatalf("fn failing on the first page: %d pages, err %v; want 1 page, fn's error", pages, err)
	}
}
