package etcdview

import (
	"context"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apiserver/pkg/storage/value"
)

// Resource is a stored resource as etcdview reads it around its store: the
// etcd client of the servers that hold it, its keys and its transformer.
// The storage map's handles are Resources, so a read of one resource always
// goes to its own etcd, `--etcd-servers-overrides` included.
type Resource interface {
	Client(ctx context.Context) (*clientv3.Client, error)
	// Key is the etcd key of the object name in namespace.
	Key(namespace, name string) (string, error)
	// KeyPrefix is the prefix of the resource's keys in namespace (all
	// namespaces when empty), ending in "/".
	KeyPrefix(namespace string) (string, error)
	// Transformer decrypts stored values; nil when none is configured.
	Transformer() value.Transformer
}

// Keys hands the keys of r's objects in namespace (all namespaces when
// empty) to fn, a page of pageSize at a time, all at one revision: rev, or
// the revision of the first page when rev is 0.
func Keys(ctx context.Context, r Resource, namespace string, rev, pageSize int64, fn func([]string) error) error {
	c, err := r.Client(ctx)
	if err != nil {
		return err
	}
	prefix, err := r.KeyPrefix(namespace)
	if err != nil {
		return err
	}
	return PagesAt(ctx, c, prefix, prefix, rev, pageSize, true, func(kvs []*mvccpb.KeyValue) error {
		keys := make([]string, len(kvs))
		for i, kv := range kvs {
			keys[i] = string(kv.Key)
		}
		return fn(keys)
	})
}

// ObjectKeys is the key of each named object in namespace; with check, also
// what etcd holds there at revision rev (0: now).
func ObjectKeys(ctx context.Context, r Resource, namespace string, names []string, check bool, rev int64) ([]KeyInfo, error) {
	var c *clientv3.Client
	if check {
		var err error
		if c, err = r.Client(ctx); err != nil {
			return nil, err
		}
	}
	infos := make([]KeyInfo, 0, len(names))
	for _, name := range names {
		key, err := r.Key(namespace, name)
		if err != nil {
			return nil, err
		}
		info := KeyInfo{Key: key}
		if check {
			if info, err = Check(ctx, c, key, rev); err != nil {
				return nil, err
			}
		}
		infos = append(infos, info)
	}
	return infos, nil
}

// InspectObject describes the stored value of the object name in
// namespace at revision rev (0: now). It returns the key, and a nil
// ValueInfo when the key does not exist.
func InspectObject(ctx context.Context, r Resource, namespace, name string, rev int64) (string, *ValueInfo, error) {
	key, err := r.Key(namespace, name)
	if err != nil {
		return "", nil, err
	}
	c, err := r.Client(ctx)
	if err != nil {
		return key, nil, err
	}
	info, err := Inspect(ctx, c, key, rev, r.Transformer())
	return key, info, err
}
