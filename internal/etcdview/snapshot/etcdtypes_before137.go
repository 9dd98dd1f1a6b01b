//go:build k8s1.35 || k8s1.36

package snapshot

import (
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/server/v3/lease/leasepb"
)

// etcd 3.6 (Kubernetes 1.35 and 1.36) generates its API types with gogo
// protobuf: each decodes itself.

func unmarshalKeyValue(b []byte, kv *mvccpb.KeyValue) error { return kv.Unmarshal(b) }

func unmarshalLease(b []byte, l *leasepb.Lease) error { return l.Unmarshal(b) }

// etcd 3.6 answers a keys-only range from the stored values, which hold
// the lease: its keys come with it.
const keysOnlyLease = true
