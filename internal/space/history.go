package space

import (
	"cmp"
	"slices"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// history counts, key by key, the revisions etcd holds from the changes
// after its last compaction, each with the value it replaced: a key's
// first change replaced the value it had at the compaction, which etcd
// keeps (unless it was a deletion: a compaction drops those).
type history struct {
	keys map[string]*keyHistory
}

type keyHistory struct {
	// held are the key's revisions etcd holds, deletions included;
	// bytes the values of those that are not deletions.
	held, bytes int64
	// last is the size of the key's last value, which a compaction
	// keeps; deleted, that its last revision deleted it, which a
	// compaction drops with the rest.
	last    int64
	deleted bool
}

func newHistory() *history { return &history{keys: map[string]*keyHistory{}} }

// add counts one change, in revision order.
func (h *history) add(ev *clientv3.Event) {
	key := string(ev.Kv.Key)
	k, ok := h.keys[key]
	if !ok {
		k = &keyHistory{}
		h.keys[key] = k
		if ev.PrevKv != nil {
			k.held++
			k.bytes += int64(len(ev.PrevKv.Value))
		}
	}
	k.held++
	if ev.Type == mvccpb.DELETE {
		k.last, k.deleted = 0, true
		return
	}
	size := int64(len(ev.Kv.Value))
	k.bytes += size
	k.last, k.deleted = size, false
}

// old are the revisions of the key a compaction to the current revision
// removes, and the bytes of their values: all but its last value.
func (k *keyHistory) old() (revisions, bytes int64) {
	if k.deleted {
		return k.held, k.bytes
	}
	return k.held - 1, k.bytes - k.last
}

// hottest are the n keys of h with the most revisions held, most first,
// ties by key; keys a compaction would leave alone are not hot.
func (h *history) hottest(n int) []HotKey {
	var out []HotKey
	for key, k := range h.keys {
		revs, bytes := k.old()
		if revs == 0 {
			continue
		}
		out = append(out, HotKey{Key: key, Revisions: k.held, OldBytes: bytes, Deleted: k.deleted})
	}
	return topHot(out, n)
}

// topHot keeps the n keys of hot with the most revisions held.
func topHot(hot []HotKey, n int) []HotKey {
	slices.SortFunc(hot, func(a, b HotKey) int {
		return cmp.Or(cmp.Compare(b.Revisions, a.Revisions), cmp.Compare(a.Key, b.Key))
	})
	return hot[:min(n, len(hot))]
}
