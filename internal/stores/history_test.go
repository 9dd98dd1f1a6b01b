package stores

import (
	"reflect"
	"testing"
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
