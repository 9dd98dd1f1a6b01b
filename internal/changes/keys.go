package changes

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/stores"
)

// streamKeys is t's keys at rev, without their values, in key order.
// A key's create and mod revisions tell its value: etcd writes a key once
// at a revision, so a key with the same two on both sides holds the same
// value there, and only the others are read, through the store, at their
// side's revision.
func streamKeys(ctx context.Context, t *handle.Target, names []string, req Request, rev int64) sideStream {
	return newStream(ctx, t, req.ChunkSize, func(send func(*served) error) error {
		// A key without its value is small: a page holds ten times the
		// objects a page of values does, and etcd, which counts what is
		// left of the range at each request, visits fewer keys.
		return keysOf(ctx, *t, names, 10*req.ChunkSize, rev, send)
	})
}

// keysOf hands each key of t at rev to fn, as an object to read later.
func keysOf(ctx context.Context, t handle.Target, names []string, chunk, rev int64, fn func(*served) error) error {
	root, err := t.KeyPrefix("")
	if err != nil {
		return err
	}
	prefix, err := t.KeyPrefix(t.Namespace)
	if err != nil {
		return err
	}
	client, err := t.Client(ctx)
	if err != nil {
		return err
	}
	// The store is built when an object is read, as the CRD handler
	// builds a custom resource's on the first request.
	var serving *handle.Handle
	load := func(s *served, namespace string) func() (runtime.Object, error) {
		return func() (runtime.Object, error) {
			if serving == nil {
				h, err := t.Serving()
				if err != nil {
					return nil, err
				}
				serving = h
			}
			s.t = handle.Target{Handle: serving, Namespace: namespace}
			return stores.GetInternalAt(ctx, s.t, s.name, rev)
		}
	}
	return etcdview.PagesAt(ctx, client, prefix, prefix, rev, chunk, true, func(kvs []*mvccpb.KeyValue) error {
		for _, kv := range kvs {
			rel := strings.TrimPrefix(string(kv.Key), root)
			namespace, name := "", rel
			if t.Resource.Namespaced {
				var ok bool
				if namespace, name, ok = strings.Cut(rel, "/"); !ok {
					return fmt.Errorf("%s: a key of %s names no namespace", kv.Key, t.Path)
				}
			}
			if len(names) > 0 && !slices.Contains(names, name) {
				continue
			}
			s := &served{name: name, key: rel, keyed: true, uid: strconv.FormatInt(kv.CreateRevision, 10), version: strconv.FormatInt(kv.ModRevision, 10), t: t}
			s.load = load(s, namespace)
			if err := fn(s); err != nil {
				return err
			}
		}
		return nil
	})
}
