package etcdview

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage/value"
)

// ValueInfo is the storage view of one key: etcd's metadata, and what the
// stored bytes are.
type ValueInfo struct {
	Key            string `json:"key"`
	CreateRevision int64  `json:"createRevision"`
	ModRevision    int64  `json:"modRevision"`
	Version        int64  `json:"version"`
	// Lease is the lease ID in hex, empty when the key has none.
	Lease string `json:"lease,omitempty"`
	// LeaseTTL is the seconds left on the lease (-1: expired).
	LeaseTTL  *int64 `json:"leaseTTL,omitempty"`
	ValueSize int    `json:"valueSize"`
	// Encryption is provider:version:key from the value's envelope, or
	// "identity" when the value is stored in plain encoding.
	Encryption string `json:"encryption"`
	// KMSKeyID is the key ID a KMS v2 plugin encrypted the value's DEK
	// with, read from the value without calling the plugin.
	KMSKeyID string `json:"kmsKeyID,omitempty"`
	// Encoding is the media type of the (decrypted) value, "unknown" when it
	// is encrypted and no transformer could decrypt it.
	Encoding string `json:"encoding"`
	// StoredAPIVersion and StoredKind are the type the value was written as,
	// the storage version, read from the bytes without conversion.
	StoredAPIVersion string `json:"storedAPIVersion,omitempty"`
	StoredKind       string `json:"storedKind,omitempty"`
	// Problem says why the value could not be decrypted or decoded.
	Problem string `json:"problem,omitempty"`
}

// Inspect reads key at revision rev (0: now) and describes its value.
// transformer decrypts values written by an encrypting provider; nil means
// none is configured. It returns nil when the key does not exist. A lease's
// TTL is the one left now, whatever the revision.
func Inspect(ctx context.Context, c *clientv3.Client, key string, rev int64, transformer value.Transformer) (*ValueInfo, error) {
	kv, err := ValueAt(ctx, c, key, rev)
	if err != nil || kv == nil {
		return nil, err
	}
	info := &ValueInfo{
		Key:            key,
		CreateRevision: kv.CreateRevision,
		ModRevision:    kv.ModRevision,
		Version:        kv.Version,
		ValueSize:      len(kv.Value),
		Encryption:     "identity",
	}
	if kv.Lease != 0 {
		info.Lease = fmt.Sprintf("%x", kv.Lease)
		ttl, err := LeaseTTL(ctx, c, kv.Lease)
		if err != nil {
			return nil, err
		}
		info.LeaseTTL = &ttl
	}
	data := kv.Value
	if env, ok := ParseEnvelope(data); ok {
		info.Encryption = env.String()
		info.KMSKeyID = env.KeyID
		if transformer == nil {
			info.Encoding = "unknown"
			info.Problem = fmt.Sprintf("encrypted with %s: pass the `--encryption-provider-config` that holds that key to decode it", env)
			return info, nil
		}
		// The apiserver authenticates each value with its key.
		plain, _, err := transformer.TransformFromStorage(ctx, data, value.DefaultContext(key))
		if err != nil {
			info.Encoding = "unknown"
			info.Problem = fmt.Sprintf("encrypted with %s, which the given `--encryption-provider-config` does not read: it needs that %s key %q (%v)", env, env.Provider, env.Key, err)
			return info, nil
		}
		data = plain
	}
	info.Encoding = MediaType(data)
	_, gvk, err := storedCodecs.UniversalDeserializer().Decode(data, nil, nil)
	if gvk != nil {
		info.StoredAPIVersion, info.StoredKind = gvk.GroupVersion().String(), gvk.Kind
	}
	// A kind kube-apiserver's scheme does not hold (a custom resource, an
	// apiextensions or aggregator type) was still read: its type is known.
	if err != nil && !(gvk != nil && runtime.IsNotRegisteredError(err)) {
		info.Problem = fmt.Sprintf("decoding: %v", err)
	}
	return info, nil
}
