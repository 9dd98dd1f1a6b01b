// Package space is `regctl space`: where etcd's space went. It reports
// etcd's own figures for its members (database size, size in use, quota,
// alarms), what its history holds (old revisions, and what compacting
// would free), and, through the map's key prefixes, the keys and bytes of
// each resource and namespace, the largest objects, and the keys with the
// most revisions held. It reads etcd through etcdview and prints with
// render; nothing is written.
package space

import (
	"cmp"
	"slices"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/etcdview/snapshot"
)

// Report is where an etcd's space went.
type Report struct {
	EtcdPrefix string `json:"etcdPrefix"`
	// Snapshot is the file's own figures when the report is of a
	// snapshot; Members, the members' when it is of a live etcd.
	Snapshot *snapshot.Status        `json:"snapshot,omitempty"`
	Members  []etcdview.MemberStatus `json:"members,omitempty"`
	Alarms   []etcdview.Alarm        `json:"alarms,omitempty"`
	// History is what each etcd holds of its past: the main one's
	// first, then those of --etcd-servers-overrides.
	History []History `json:"history"`
	// Revision is the main etcd's revision, which the keys were read at.
	Revision int64 `json:"revision"`
	// Keys and Bytes are the keys under the etcd prefix and their values'
	// bytes, on every etcd.
	Keys  int64 `json:"keys"`
	Bytes int64 `json:"bytes"`
	// Resources hold keys or old revisions, most bytes first.
	Resources []Resource `json:"resources"`
	// Namespaces, with --by namespace: the keys of namespaced resources
	// in each namespace, most bytes first.
	Namespaces []Namespace `json:"namespaces,omitempty"`
	// Largest are the largest values under the etcd prefix, largest
	// first.
	Largest []Object `json:"largest"`
	// HotKeys are the keys with the most revisions etcd holds, most
	// first: a key written often fills etcd as surely as a large value,
	// until a compaction.
	HotKeys []HotKey `json:"hotKeys"`
}

// History is what one etcd holds of its past, and what a compaction to its
// current revision would free of it: every revision but each key's last
// value (a deleted key's last revision, the deletion, goes too).
type History struct {
	// EtcdServers are the servers of an etcd of --etcd-servers-overrides;
	// none for the main etcd.
	EtcdServers []string `json:"etcdServers,omitempty"`
	Revision    int64    `json:"revision"`
	// Compacted is the oldest revision etcd can be read at: its last
	// compaction's, or 1.
	Compacted int64 `json:"compacted"`
	// Read says the history was read: OldRevisions, OldBytes and the hot
	// keys come from it. It is not when it holds more revisions than
	// --max-history.
	Read bool `json:"read"`
	// OldRevisions are the revisions a compaction to Revision would
	// remove, OldBytes the bytes of the values they hold.
	OldRevisions int64 `json:"oldRevisions"`
	OldBytes     int64 `json:"oldBytes"`
	// OutsideRevisions and OutsideBytes are the part of them that are
	// revisions of keys outside the etcd prefix, which no resource
	// counts.
	OutsideRevisions int64 `json:"outsideRevisions,omitempty"`
	OutsideBytes     int64 `json:"outsideBytes,omitempty"`
}

// Resource is what one resource (or, with no resource, a group of keys no
// path claims) holds.
type Resource struct {
	Resource  string `json:"resource,omitempty"`
	KeyPrefix string `json:"keyPrefix"`
	Keys      int64  `json:"keys"`
	Bytes     int64  `json:"bytes"`
	// OldRevisions and OldBytes are its keys' old revisions, which a
	// compaction would remove, and the bytes of their values.
	OldRevisions int64 `json:"oldRevisions"`
	OldBytes     int64 `json:"oldBytes"`
	// EtcdServers are set for a resource stored on other servers than the
	// rest (--etcd-servers-overrides).
	EtcdServers []string `json:"etcdServers,omitempty"`
}

// Namespace is what the namespaced resources hold in one namespace.
type Namespace struct {
	Namespace string `json:"namespace"`
	Keys      int64  `json:"keys"`
	Bytes     int64  `json:"bytes"`
	// Resources are the resources with keys in it, most bytes first.
	Resources []NamespaceResource `json:"resources"`
}

// NamespaceResource is one resource's keys in a namespace.
type NamespaceResource struct {
	Resource string `json:"resource"`
	Keys     int64  `json:"keys"`
	Bytes    int64  `json:"bytes"`
}

// Object is one key and the size of its value.
type Object struct {
	Key      string `json:"key"`
	Resource string `json:"resource,omitempty"`
	Bytes    int64  `json:"bytes"`
}

// HotKey is a key and the revisions etcd holds of it.
type HotKey struct {
	Key      string `json:"key"`
	Resource string `json:"resource,omitempty"`
	// Revisions are its revisions etcd holds, its deletions included;
	// OldBytes the bytes of the values a compaction would remove.
	Revisions int64 `json:"revisions"`
	OldBytes  int64 `json:"oldBytes"`
	// Deleted says the key's last revision deleted it.
	Deleted bool `json:"deleted,omitempty"`
}

// bySize orders what holds the most bytes first, ties by name: a stable
// order for the same data.
func bySize[T any](items []T, bytes func(T) int64, name func(T) string) {
	slices.SortFunc(items, func(a, b T) int {
		return cmp.Or(cmp.Compare(bytes(b), bytes(a)), cmp.Compare(name(a), name(b)))
	})
}
