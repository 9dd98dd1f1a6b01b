package stores

import (
	"context"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storedvalue"
)

// ValueReader reads values of a store as read from etcd, with what this
// release would lose of each by writing it again: what a restore reads
// many of at once, in pages, rather than through the store one by one.
type ValueReader struct {
	t handle.Target
	d *itemDecoder
}

// NewValueReader reads values of the target's store.
func NewValueReader(t handle.Target) (*ValueReader, error) {
	d, err := newItemDecoder(t, storage.Everything)
	if err != nil {
		return nil, err
	}
	return &ValueReader{t: t, d: d}, nil
}

// Read decodes kv as the store's storage decodes what it reads (its
// transformer, its codec into a new object, the versioner; the store's
// decorator), and says what this release would lose by writing it again
// (nil: nothing). A value it cannot read is explained as a store's read
// explains it: a key the flags lack is a *storedvalue.KeyError.
func (r *ValueReader) Read(ctx context.Context, kv *mvccpb.KeyValue) (runtime.Object, *storedvalue.Loss, error) {
	obj, err := r.Decode(ctx, kv)
	if err != nil {
		return nil, nil, err
	}
	loss, err := storedvalue.Check(ctx, r.t.Handle, string(kv.Key), kv.Value)
	return obj, loss, err
}

// Decode is Read without asking what a write would lose: for a reader
// that looks at values and never writes them back.
func (r *ValueReader) Decode(ctx context.Context, kv *mvccpb.KeyValue) (runtime.Object, error) {
	obj, err := r.d.decode(ctx, kv)
	if err != nil {
		return nil, explainValue(ctx, r.t.Handle, string(kv.Key), kv.Value, valueFault(err))
	}
	if r.t.Store.Decorator != nil {
		r.t.Store.Decorator(obj)
	}
	return obj, nil
}
