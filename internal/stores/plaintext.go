package stores

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apiserver/pkg/storage/value"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/wiring"
)

// plaintextSample is how many stored values CheckPlaintext looks at: enough
// to find a resource that a server encrypts, in one small read.
const plaintextSample = 5

// CheckPlaintext refuses writes of path in plain text where its values are
// stored encrypted: a write provider of identity (no
// `--encryption-provider-config`, or none that covers the resource) while
// values under the resource's key prefix carry an envelope the store cannot
// read. The apiserver that owns that etcd encrypts them, and a plaintext
// value written beside them would be served as if encrypted at rest. A
// config whose identity provider writes but whose keys read the stored
// values (as while decrypting a cluster) is the user's choice and passes.
func CheckPlaintext(ctx context.Context, h *wiring.Handle) error {
	r := h.Route
	// A store with no recorded provider writes what it encodes, as
	// identity does.
	if r.KeyPrefix == "" || (r.Encryption != "identity" && r.Encryption != "") {
		return nil
	}
	prefix, err := h.KeyPrefix("")
	if err != nil {
		return err
	}
	c, err := h.Client(ctx)
	if err != nil {
		return err
	}
	resp, err := c.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithLimit(plaintextSample))
	if err != nil {
		return fmt.Errorf("reading %s to check how %s are encrypted: %w", prefix, r.Resource, err)
	}
	for _, kv := range resp.Kvs {
		env, encrypted := etcdview.ParseEnvelope(kv.Value)
		if encrypted && !readable(ctx, h.Transformer(), kv.Key, kv.Value) {
			return fmt.Errorf("%s are stored encrypted with %s (%s) but would be written in plain text: pass the apiserver's `--encryption-provider-config`, or `--allow-plaintext` to write anyway",
				r.Resource, env, kv.Key)
		}
	}
	return nil
}

// readable tells whether the store's transformer decrypts a stored value.
func readable(ctx context.Context, tr value.Transformer, key, data []byte) bool {
	if tr == nil {
		return false
	}
	_, _, err := tr.TransformFromStorage(ctx, data, value.DefaultContext(key))
	return err == nil
}
