//go:build !k8s1.35 && !k8s1.36

package snapshot

import (
	"google.golang.org/protobuf/proto"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/server/v3/lease/leasepb"
)

// etcd 3.7 (Kubernetes 1.37) generates its API types with the protobuf
// API: they are decoded by proto.Unmarshal.

func unmarshalKeyValue(b []byte, kv *mvccpb.KeyValue) error { return proto.Unmarshal(b, kv) }

func unmarshalLease(b []byte, l *leasepb.Lease) error { return proto.Unmarshal(b, l) }

// etcd 3.7 answers a keys-only range from its in-memory index, which holds
// no lease: its keys come without one.
const keysOnlyLease = false
