package stores

import (
	"context"
	"fmt"

	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/wiring"
)

// explain turns a storage error on one object into a message that names the
// etcd key and, for values the store could not read, why: the encryption
// provider and key it was written with, or its encoding. API errors that
// already say what is wrong (NotFound, Invalid) pass through unchanged.
func explain(ctx context.Context, w *wiring.Wiring, t Target, name string, err error) error {
	if !unreadable(ctx, err) {
		return err
	}
	key, kerr := w.EtcdKey(genericapirequest.WithNamespace(ctx, t.Namespace), t.Path, name)
	if kerr != nil {
		return err
	}
	return explainKey(ctx, w, t.Path, key, 0, err)
}

// explainKey looks at the value of key at revision rev (0: now), on the
// etcd that holds the resource of path.
func explainKey(ctx context.Context, w *wiring.Wiring, path, key string, rev int64, err error) error {
	c, cerr := w.ClientFor(ctx, path)
	if cerr != nil {
		return fmt.Errorf("reading %s: %w", key, err)
	}
	kv, verr := etcdview.ValueAt(ctx, c, key, rev)
	if verr != nil || kv == nil {
		return fmt.Errorf("reading %s: %w", key, err)
	}
	if env, ok := etcdview.ParseEnvelope(kv.Value); ok {
		if w.Transformer(path) == nil {
			return fmt.Errorf("reading %s: the value is encrypted with %s; pass the `--encryption-provider-config` that holds that key", key, env)
		}
		return fmt.Errorf("reading %s: cannot decrypt the value encrypted with %s: %w", key, env, err)
	}
	return fmt.Errorf("reading %s: cannot decode the stored value (%s, %d bytes): %w", key, etcdview.MediaType(kv.Value), len(kv.Value), err)
}
