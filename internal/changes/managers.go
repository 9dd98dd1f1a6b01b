package changes

import (
	"encoding/json"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/regctl/regctl/internal/stores/history"
)

// owners are an object's managedFields entries, each with the paths of
// the fields it owns, as ChangedPaths names them with list elements as
// [*]: an entry names an element by its key or value, a change by its
// index.
type owners []owner

type owner struct {
	manager, operation string
	time               time.Time
	// paths are every field the set names; leaves those it owns whole
	// (a field with nothing under it in the set: a value, or an atomic
	// map or list).
	paths, leaves []string
}

// managers reads obj's metadata.managedFields.
func managers(obj runtime.Object) owners {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	var out owners
	for _, e := range m.GetManagedFields() {
		o := owner{manager: e.Manager, operation: string(e.Operation)}
		if e.Time != nil {
			o.time = e.Time.Time
		}
		if e.FieldsV1 != nil {
			var fields map[string]any
			if json.Unmarshal(e.FieldsV1.Raw, &fields) == nil {
				o.paths, o.leaves = fieldPaths("", fields, nil, nil)
			}
		}
		out = append(out, o)
	}
	return out
}

// fieldPaths flattens a managedFields fieldsV1 set: f:name is a field,
// k:{...}, v:... and i:N a list element.
func fieldPaths(path string, set map[string]any, paths, leaves []string) ([]string, []string) {
	for k, v := range set {
		var p string
		switch {
		case strings.HasPrefix(k, "f:"):
			p = history.JoinPath(path, k[2:])
		case strings.HasPrefix(k, "k:"), strings.HasPrefix(k, "v:"), strings.HasPrefix(k, "i:"):
			p = path + "[*]"
		default:
			continue // ".": the element itself
		}
		paths = append(paths, p)
		sub, _ := v.(map[string]any)
		if len(sub) == 0 || len(sub) == 1 && sub["."] != nil {
			leaves = append(leaves, p)
			continue
		}
		paths, leaves = fieldPaths(p, sub, paths, leaves)
	}
	return paths, leaves
}

var index = regexp.MustCompile(`\[[0-9]+\]`)

// of is the field at path with the entry that owns it, or a field under
// it (a whole map or list that changed), or the field it is under: of
// several, the one written last.
func (os owners) of(path string) Field {
	f := Field{Path: path}
	general := index.ReplaceAllString(path, "[*]")
	var best *owner
	for i := range os {
		o := &os[i]
		if o.owns(general) && (best == nil || o.time.After(best.time)) {
			best = o
		}
	}
	if best != nil {
		f.Manager, f.Operation = best.manager, best.operation
		if !best.time.IsZero() {
			f.Time = best.time.UTC().Format(time.RFC3339)
		}
	}
	return f
}

func (o *owner) owns(path string) bool {
	for _, p := range o.paths {
		if p == path || under(p, path) {
			return true
		}
	}
	for _, p := range o.leaves {
		if under(path, p) {
			return true
		}
	}
	return false
}

// under tells whether path is a field within parent.
func under(path, parent string) bool {
	return strings.HasPrefix(path, parent+".") || strings.HasPrefix(path, parent+"[")
}
