// Package history reads every revision of one object that etcd still holds,
// each served as the store serves it, with what changed and when.
package history

import (
	"context"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/stores"
)

// Object is every revision of one object that etcd still holds.
type Object struct {
	Key       string  `json:"key"`
	Revisions []Entry `json:"revisions"`
}

// Entry is one change of an object: a value written, or its
// deletion.
type Entry struct {
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
	// Time is what is known of when the revision was written.
	Time *When `json:"time,omitempty"`
}

// When is what is known of when a revision was written: the time At, as
// the clock Clock that the revision itself wrote reads it, or, when it
// wrote none, the times of the clocks of the revisions nearest before and
// after it, After and Before, either of which may be unknown. Of
// fills in At from the object's own clocks; the Leases' clocks (package
// clock) check it and fill in the rest.
type When struct {
	At     *time.Time `json:"at,omitempty"`
	Clock  string     `json:"clock,omitempty"`
	After  *time.Time `json:"after,omitempty"`
	Before *time.Time `json:"before,omitempty"`
}

// Event names.
const (
	EventCreated    = "created"
	EventUpdated    = "updated"
	EventDeleted    = "deleted"
	EventOldestHeld = "oldest held"
	EventCompacted  = "held at the compaction"
)

// Of reads the changes of the object name that etcd holds, from
// its last compaction on, and reads each value through the store at its
// revision, as get --revision does, to tell what changed.
func Of(ctx context.Context, t handle.Target, name string) (*Object, error) {
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
	h := &Object{Key: key, Revisions: []Entry{}}
	var previous map[string]any
	for i, ev := range events {
		entry := Entry{Order: i + 1, Revision: ev.Revision, ValueSize: len(ev.Value)}
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
		entry.Time = ownClock(entry.Event, previous, current)
		previous = current
		h.Revisions = append(h.Revisions, entry)
	}
	return h, nil
}

// ownClock is the time an object's revision wrote in the object itself,
// nil when it wrote none or it cannot be told: at its creation, its
// creationTimestamp; at an update, the latest time of a managedFields
// entry that is newer than the same manager's before it (the field
// manager sets an entry's time when its manager changed a field). Both
// are whole seconds, set by the server's clock. A restored object
// carries its old creationTimestamp and entries, which the Leases' clocks
// around the revision then disown.
func ownClock(event string, previous, current map[string]any) *When {
	switch {
	case current == nil:
		return nil
	case event == EventCreated:
		at, ok := timeField(current, "metadata", "creationTimestamp")
		if !ok {
			return nil
		}
		return &When{At: &at, Clock: "metadata.creationTimestamp"}
	case event != EventUpdated || previous == nil:
		return nil
	}
	before := map[string]time.Time{}
	for _, e := range managedFields(previous) {
		before[e.id] = e.time
	}
	var latest *managedEntry
	for _, e := range managedFields(current) {
		if was, ok := before[e.id]; (!ok || e.time.After(was)) && (latest == nil || e.time.After(latest.time)) {
			latest = &e
		}
	}
	if latest == nil {
		return nil
	}
	return &When{At: &latest.time, Clock: "metadata.managedFields (" + latest.id + ")"}
}

// managedEntry is a managedFields entry's time, by what names the entry:
// its manager, operation and subresource.
type managedEntry struct {
	id   string
	time time.Time
}

// managedFields are the timed entries of an object's managedFields.
func managedFields(obj map[string]any) []managedEntry {
	meta, _ := obj["metadata"].(map[string]any)
	entries, _ := meta["managedFields"].([]any)
	var out []managedEntry
	for _, e := range entries {
		e, _ := e.(map[string]any)
		at, ok := timeField(e, "time")
		if !ok {
			continue
		}
		id := strings.Join(slices.DeleteFunc([]string{str(e["manager"]), str(e["operation"]), str(e["subresource"])}, func(s string) bool { return s == "" }), ", ")
		out = append(out, managedEntry{id: id, time: at})
	}
	return out
}

// timeField is the RFC 3339 time at path in obj.
func timeField(obj map[string]any, path ...string) (time.Time, bool) {
	var v any = obj
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return time.Time{}, false
		}
		v = m[p]
	}
	t, err := time.Parse(time.RFC3339, str(v))
	return t, err == nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// servedAt is the object as the apiserver would have served it at rev,
// as plain data.
func servedAt(ctx context.Context, t handle.Target, name string, rev int64) (map[string]any, error) {
	obj, err := stores.GetInternalAt(ctx, t, name, rev)
	if err != nil {
		return nil, err
	}
	ext, err := stores.ToExternal(t, obj)
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
