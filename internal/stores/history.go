package stores

import (
	"context"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
)

// History is every revision of one object that etcd still holds.
type History struct {
	Key       string         `json:"key"`
	Revisions []HistoryEntry `json:"revisions"`
}

// HistoryEntry is one change of an object: a value written, or its
// deletion.
type HistoryEntry struct {
	// Order counts the changes from 1, oldest first.
	Order int `json:"order"`
	// Revision is the etcd revision of the change: the value's mod
	// revision, or the revision of the deletion. For the oldest value
	// held, written before the last compaction, it is the compaction
	// revision, where the value was still current and can be read
	// (get --revision); WrittenAt is then its write's.
	Revision  int64 `json:"revision"`
	WrittenAt int64 `json:"writtenAt,omitempty"`
	// Event is created, updated or deleted; the oldest value held is
	// "oldest held" when its creation was compacted away, and "held at
	// the compaction" when its write was too.
	Event     string `json:"event"`
	ValueSize int    `json:"valueSize"`
	// Changed are the paths of the served object's fields that differ
	// from the previous revision, metadata.resourceVersion and
	// metadata.managedFields aside: the first changes with every write,
	// and the second records when each writer last wrote.
	Changed []string `json:"changed,omitempty"`
	// Problem says why this revision's value could not be read.
	Problem string `json:"problem,omitempty"`
}

// Event names.
const (
	EventCreated    = "created"
	EventUpdated    = "updated"
	EventDeleted    = "deleted"
	EventOldestHeld = "oldest held"
	EventCompacted  = "held at the compaction"
)

// ObjectHistory reads the changes of the object name that etcd holds, from
// its last compaction on, and reads each value through the store at its
// revision, as get --revision does, to tell what changed.
func ObjectHistory(ctx context.Context, t handle.Target, name string) (*History, error) {
	key, err := t.Key(t.Namespace, name)
	if err != nil {
		return nil, err
	}
	c, err := t.Client(ctx)
	if err != nil {
		return nil, err
	}
	events, err := etcdview.KeyHistory(ctx, c, key)
	if err != nil {
		return nil, err
	}
	h := &History{Key: key, Revisions: []HistoryEntry{}}
	var previous map[string]any
	for i, ev := range events {
		entry := HistoryEntry{Order: i + 1, Revision: ev.Revision, ValueSize: len(ev.Value)}
		var current map[string]any
		switch {
		case ev.ReadAt > ev.Revision:
			// Its write was compacted away: it is read where it was
			// still current.
			entry.Event, entry.Revision, entry.WrittenAt = EventCompacted, ev.ReadAt, ev.Revision
		case ev.Deleted:
			entry.Event = EventDeleted
		case ev.CreateRevision == ev.Revision:
			entry.Event = EventCreated
		case i == 0:
			entry.Event = EventOldestHeld
		default:
			entry.Event = EventUpdated
		}
		if !ev.Deleted {
			current, err = servedAt(ctx, t, name, entry.Revision)
			if err != nil && ctx.Err() != nil {
				return nil, err
			}
			if err != nil {
				entry.Problem = err.Error()
			}
		}
		if entry.Event == EventUpdated && previous != nil && current != nil {
			entry.Changed = ChangedPaths(previous, current)
		}
		previous = current
		h.Revisions = append(h.Revisions, entry)
	}
	return h, nil
}

// servedAt is the object as the apiserver would have served it at rev,
// as plain data.
func servedAt(ctx context.Context, t handle.Target, name string, rev int64) (map[string]any, error) {
	obj, err := GetInternalAt(ctx, t, name, rev)
	if err != nil {
		return nil, err
	}
	ext, err := ToExternal(t, obj)
	if err != nil {
		return nil, err
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(ext)
}

// noise are the fields every write changes whatever was written.
var noise = []string{"metadata.resourceVersion", "metadata.managedFields"}

// ChangedPaths lists the paths of the fields where two served objects, as
// plain data, differ, metadata.resourceVersion and metadata.managedFields
// aside (see changedPaths).
func ChangedPaths(a, b map[string]any) []string {
	return changedPaths("", a, b)
}

// changedPaths lists the paths under path where a and b differ, sorted:
// a field added, removed or changed; a list of another length is one
// change, otherwise each element that differs is.
func changedPaths(path string, a, b any) []string {
	if slices.Contains(noise, path) || reflect.DeepEqual(a, b) {
		return nil
	}
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok {
			return []string{path}
		}
		var out []string
		for _, k := range unionKeys(a, b) {
			out = append(out, changedPaths(join(path, k), a[k], b[k])...)
		}
		return out
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return []string{path}
		}
		var out []string
		for i := range a {
			out = append(out, changedPaths(path+"["+strconv.Itoa(i)+"]", a[i], b[i])...)
		}
		return out
	}
	return []string{path}
}

func unionKeys(a, b map[string]any) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// JoinPath names field under path as ChangedPaths does: a field whose
// name holds a dot (a label such as app.kubernetes.io/name) is quoted in
// brackets, so that the path says which field it is.
func JoinPath(path, field string) string { return join(path, field) }

func join(path, field string) string {
	switch {
	case strings.ContainsAny(field, ".[]"):
		return path + "[" + strconv.Quote(field) + "]"
	case path == "":
		return field
	}
	return path + "." + field
}
