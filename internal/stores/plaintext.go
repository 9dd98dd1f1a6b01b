package stores

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"k8s.io/apiserver/pkg/storage/value"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
)

// plaintextPage is how many stored values CheckPlaintext reads per request:
// it bounds the memory of the check, not what it reads.
const plaintextPage = 500

// CheckPlaintext refuses writes of path in plain text where its values are
// stored encrypted: a write provider of identity (no
// `--encryption-provider-config`, or none that covers the resource) while
// values under the resource's key prefix carry an envelope the store cannot
// read. The apiserver that owns that etcd encrypts them, and a plaintext
// value written beside them would be served as if encrypted at rest. A
// config whose identity provider writes but whose keys read the stored
// values (as while decrypting a cluster) is the user's choice and passes.
//
// Every value of the resource is looked at, until one says so: after
// encryption is turned on, the values written before stay plain until
// rewritten, in any key order, so no sample of them can tell. Each provider
// and key is tried once, not each value.
func CheckPlaintext(ctx context.Context, h *handle.Handle) error {
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
	readableBy := map[etcdview.Envelope]bool{}
	var refused error
	stop := errors.New("stop")
	err = etcdview.Pages(ctx, c, prefix, prefix, plaintextPage, false, func(kvs []*mvccpb.KeyValue) error {
		for _, kv := range kvs {
			env, encrypted := etcdview.ParseEnvelope(kv.Value)
			if !encrypted {
				continue
			}
			ok, seen := readableBy[env]
			if !seen {
				ok = readable(ctx, h.Transformer(), kv.Key, kv.Value)
				readableBy[env] = ok
			}
			if !ok {
				refused = plaintextRefusal(h, env, string(kv.Key))
				return stop
			}
		}
		return nil
	})
	if refused != nil {
		return refused
	}
	if err != nil {
		return fmt.Errorf("reading %s to check how %s are encrypted: %w", prefix, r.Resource, err)
	}
	return nil
}

// plaintextRefusal says why a plaintext write is refused, and what to pass:
// the server's encryption config when none was given, or the key the one
// given lacks.
func plaintextRefusal(h *handle.Handle, env etcdview.Envelope, key string) error {
	what := fmt.Sprintf("%s are stored encrypted with %s (%s) but would be written in plain text", h.Route.Resource, env, key)
	if h.Transformer() == nil {
		return fmt.Errorf("%s: pass the apiserver's `--encryption-provider-config`, or `--allow-plaintext` to write anyway", what)
	}
	return fmt.Errorf("%s: the `--encryption-provider-config` given has no %s key %q for %s; pass the apiserver's own config, or `--allow-plaintext` to write anyway",
		what, env.Provider, env.Key, h.Route.Resource)
}

// readable tells whether the store's transformer decrypts a stored value.
func readable(ctx context.Context, tr value.Transformer, key, data []byte) bool {
	if tr == nil {
		return false
	}
	_, _, err := tr.TransformFromStorage(ctx, data, value.DefaultContext(key))
	return err == nil
}
