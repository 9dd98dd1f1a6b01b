package stores

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/rest"
	api "k8s.io/kubernetes/pkg/apis/core"
)

// countedKV adds up etcd's count of the keys in the range of each request
// made through it: what etcd visited to answer.
type countedKV struct {
	clientv3.KV
	mu                       sync.Mutex
	requests                 int
	counted, largest, values int64
}

func (c *countedKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	resp, err := c.KV.Get(ctx, key, opts...)
	if err == nil {
		c.mu.Lock()
		c.requests++
		c.counted += resp.Count
		c.values += int64(len(resp.Kvs))
		c.largest = max(c.largest, resp.Count)
		c.mu.Unlock()
	}
	return resp, err
}

// TestSelectorsFilterBoundedPages: a list with a selector that matches 3
// config maps of 2,003 reads them all in bounded windows, page by page,
// through the target's etcd client: etcd counts about the keys it is asked
// for (the first request counts every key once; no other more than a few
// pages), where the store's own List would ask for the rest of the prefix,
// page after page, filling each past the keys it filters out.
func TestSelectorsFilterBoundedPages(t *testing.T) {
	s := newRealConfigMaps(t)
	var all []string
	for i := range 2000 {
		all = append(all, fmt.Sprintf("cm-%04d", i))
	}
	s.create(t, all...)
	ctx := RequestContext(context.Background(), s.target)
	labelled := []string{"cm-0500-x", "cm-1500-x", "zz-x"}
	for _, name := range labelled {
		cm := &api.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "x"}}}
		if _, err := s.target.Storage.(rest.Creater).Create(ctx, cm, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	counted := &countedKV{KV: s.etcd.KV}
	h := *s.target.Handle
	h.Dial = func(context.Context) (*clientv3.Client, error) {
		c := clientv3.NewCtxClient(context.Background())
		c.KV = counted
		return c, nil
	}
	target := s.target
	target.Handle = &h

	const chunk = 50
	var got []string
	pages := 0
	err := List(context.Background(), target, ListOptions{LabelSelector: "app=x", ChunkSize: chunk}, func(p Page) error {
		pages++
		got = append(got, names(p.Items)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, labelled) {
		t.Errorf("listed %q, want %q", got, labelled)
	}
	const n = 2003
	if counted.values != n {
		t.Errorf("read %d values through the target's client, want every one of %d", counted.values, n)
	}
	if counted.requests < n/chunk {
		t.Errorf("%d requests, want pages of at most %d", counted.requests, chunk)
	}
	// The first request counts every key; the others a few pages each.
	if bound := int64(n + 8*n); counted.counted > bound {
		t.Errorf("etcd counted %d keys over %d requests, more than %d", counted.counted, counted.requests, bound)
	}
	t.Logf("%d requests, %d keys counted, %d pages handed on", counted.requests, counted.counted, pages)
}
