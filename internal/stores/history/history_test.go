package history

import (
	"reflect"
	"testing"
	"time"
)

func TestChangedPaths(t *testing.T) {
	obj := func(data map[string]any, extra ...any) map[string]any {
		o := map[string]any{
			"metadata": map[string]any{"name": "app", "resourceVersion": "7", "managedFields": []any{map[string]any{"time": "t1"}}},
			"data":     data,
		}
		for i := 0; i+1 < len(extra); i += 2 {
			o[extra[i].(string)] = extra[i+1]
		}
		return o
	}
	noisy := obj(map[string]any{"v": "0"})
	noisy["metadata"].(map[string]any)["resourceVersion"] = "8"
	noisy["metadata"].(map[string]any)["managedFields"] = []any{map[string]any{"time": "t2"}}
	for _, tc := range []struct {
		name string
		a, b map[string]any
		want []string
	}{
		{"nothing", obj(map[string]any{"v": "0"}), obj(map[string]any{"v": "0"}), nil},
		{"only what every write changes", obj(map[string]any{"v": "0"}), noisy, nil},
		{"a value", obj(map[string]any{"v": "0"}), obj(map[string]any{"v": "1"}), []string{"data.v"}},
		{"added and removed fields, sorted", obj(map[string]any{"v": "0"}), obj(map[string]any{"w": "0"}, "binaryData", map[string]any{}), []string{"binaryData", "data.v", "data.w"}},
		{"a list element", obj(nil, "items", []any{"a", "b"}), obj(nil, "items", []any{"a", "c"}), []string{"items[1]"}},
		{"a field named with dots", obj(nil, "labels", map[string]any{"app.kubernetes.io/name": "a"}), obj(nil, "labels", map[string]any{"app.kubernetes.io/name": "b"}), []string{`labels["app.kubernetes.io/name"]`}},
		{"a list of another length", obj(nil, "items", []any{"a"}), obj(nil, "items", []any{"a", "b"}), []string{"items"}},
	} {
		if got := changedPaths("", tc.a, tc.b); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestOwnClock reads the time a revision wrote in the object itself: the
// creationTimestamp where it was created, the newest managedFields entry
// an update made newer (or added); none where no entry changed.
func TestOwnClock(t *testing.T) {
	obj := func(created string, entries ...[3]string) map[string]any {
		var mf []any
		for _, e := range entries {
			mf = append(mf, map[string]any{"manager": e[0], "operation": e[1], "time": e[2]})
		}
		return map[string]any{"metadata": map[string]any{"creationTimestamp": created, "managedFields": mf}}
	}
	const t0, t1, t2 = "2026-11-29T14:00:00Z", "2026-11-29T14:00:01Z", "2026-11-29T14:00:02Z"
	v1 := obj(t0, [3]string{"kubectl", "Update", t0})
	for _, tc := range []struct {
		name         string
		event        string
		prev, cur    map[string]any
		at, clockSrc string
	}{
		{"a creation", EventCreated, nil, v1, t0, "metadata.creationTimestamp"},
		{"an update by the same manager", EventUpdated, v1, obj(t0, [3]string{"kubectl", "Update", t2}), t2, "metadata.managedFields (kubectl, Update)"},
		{"an update by another manager", EventUpdated, v1, obj(t0, [3]string{"kubectl", "Update", t0}, [3]string{"ctl", "Apply", t1}), t1, "metadata.managedFields (ctl, Apply)"},
		{"an update that changed no entry", EventUpdated, v1, v1, "", ""},
		{"an entry made older (a restore)", EventUpdated, obj(t0, [3]string{"kubectl", "Update", t2}), v1, "", ""},
		{"the oldest held, whose previous is gone", EventOldestHeld, nil, v1, "", ""},
		{"a deletion", EventDeleted, v1, nil, "", ""},
	} {
		got := ownClock(tc.event, tc.prev, tc.cur)
		switch {
		case tc.at == "" && got != nil:
			t.Errorf("%s: %+v, want none", tc.name, got)
		case tc.at != "" && (got == nil || got.At.Format(time.RFC3339) != tc.at || got.Clock != tc.clockSrc):
			t.Errorf("%s: %+v, want %s by %s", tc.name, got, tc.at, tc.clockSrc)
		}
	}
}
