package routetable

import (
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// record is a route of either kind of table: routes of two tables are
// matched by their key.
type record interface {
	Route | HTTPRoute
	key() string
}

func (r Route) key() string { return r.Path }

// Result is what changed from an old route table to a new one.
type Result = Diff[Route]

// HTTPResult is what changed from an old HTTP route table to a new one.
type HTTPResult = Diff[HTTPRoute]

// Diff is what changed from an old table to a new one. Every list is
// sorted (routes by key, fields in json tag order), so the same two tables
// always give the same Diff, in text and in json.
type Diff[R record] struct {
	// Old and New name the compared tables; Compare leaves them to the
	// caller.
	Old string `json:"old"`
	New string `json:"new"`
	// Equal is true when no counted field changed and no route was added
	// or removed.
	Equal bool `json:"equal"`
	// Table holds the changes of the table's own fields.
	Table   []Change      `json:"table"`
	Changed []RouteChange `json:"changed"`
	Added   []R           `json:"added"`
	Removed []R           `json:"removed"`
}

// RouteChange is a route present in both tables whose record changed.
type RouteChange struct {
	// Path is the route's path; for an HTTP route, its method and path
	// ("GET /api/v1/pods"), which together name it.
	Path    string   `json:"path"`
	Changes []Change `json:"changes"`
}

// Change is one field's old and new value. An informational change is in a
// field the filter does not count: it is shown, but tables still compare
// equal.
type Change struct {
	Field         string `json:"field"`
	Old           any    `json:"old"`
	New           any    `json:"new"`
	Informational bool   `json:"informational,omitempty"`
}

// Compare lists what changed from the table from to the table to. Added and
// removed routes always count; a changed field counts when filter counts it.
func Compare(from, to RouteTable, filter Filter) Result {
	return compare(reflect.ValueOf(from), reflect.ValueOf(to), tableFields, from.Routes, to.Routes, routeFields, filter)
}

// compare matches the routes of two tables by key and lists their changes,
// and those of the tables' own fields.
func compare[R record](from, to reflect.Value, tFields []field, fromRoutes, toRoutes []R, rFields []field, filter Filter) Diff[R] {
	res := Diff[R]{
		Table:   changes(from, to, tFields, filter),
		Changed: []RouteChange{},
		Added:   []R{},
		Removed: []R{},
	}
	oldByKey := byKey(fromRoutes)
	newByKey := byKey(toRoutes)
	for k, o := range oldByKey {
		n, ok := newByKey[k]
		if !ok {
			res.Removed = append(res.Removed, o)
			continue
		}
		if c := changes(reflect.ValueOf(o), reflect.ValueOf(n), rFields, filter); len(c) > 0 {
			res.Changed = append(res.Changed, RouteChange{Path: k, Changes: c})
		}
	}
	for k, n := range newByKey {
		if _, ok := oldByKey[k]; !ok {
			res.Added = append(res.Added, n)
		}
	}
	sort.Slice(res.Changed, func(i, j int) bool { return res.Changed[i].Path < res.Changed[j].Path })
	sort.Slice(res.Added, func(i, j int) bool { return res.Added[i].key() < res.Added[j].key() })
	sort.Slice(res.Removed, func(i, j int) bool { return res.Removed[i].key() < res.Removed[j].key() })
	res.Equal = len(res.Added) == 0 && len(res.Removed) == 0 && !counted(res.Table)
	for _, rc := range res.Changed {
		res.Equal = res.Equal && !counted(rc.Changes)
	}
	return res
}

func byKey[R record](routes []R) map[string]R {
	m := make(map[string]R, len(routes))
	for _, r := range routes {
		m[r.key()] = r
	}
	return m
}

func changes(from, to reflect.Value, fields []field, filter Filter) []Change {
	out := []Change{}
	for _, f := range fields {
		o, n := normalize(from.FieldByIndex(f.index)), normalize(to.FieldByIndex(f.index))
		if reflect.DeepEqual(o, n) {
			continue
		}
		out = append(out, Change{Field: f.name, Old: o, New: n, Informational: !filter.Counts(f.name)})
	}
	return out
}

// normalize makes a missing list or map and an empty one the same value:
// the document omits empty ones, and a hand-written table may spell them [].
func normalize(v reflect.Value) any {
	if v.Kind() == reflect.Slice && v.Len() == 0 {
		return reflect.MakeSlice(v.Type(), 0, 0).Interface()
	}
	if v.Kind() == reflect.Map && v.Len() == 0 {
		return reflect.MakeMap(v.Type()).Interface()
	}
	return v.Interface()
}

func counted(cs []Change) bool {
	for _, c := range cs {
		if !c.Informational {
			return true
		}
	}
	return false
}

// WithoutInformational drops the changes in fields that do not count, and
// the routes left with no change.
func (r Diff[R]) WithoutInformational() Diff[R] {
	r.Table = keepCounted(r.Table)
	changed := []RouteChange{}
	for _, rc := range r.Changed {
		if cs := keepCounted(rc.Changes); len(cs) > 0 {
			changed = append(changed, RouteChange{Path: rc.Path, Changes: cs})
		}
	}
	r.Changed = changed
	return r
}

func keepCounted(cs []Change) []Change {
	out := []Change{}
	for _, c := range cs {
		if !c.Informational {
			out = append(out, c)
		}
	}
	return out
}

// Empty reports whether there is nothing to show: no change at all, counted
// or informational.
func (r Diff[R]) Empty() bool {
	return len(r.Table) == 0 && len(r.Changed) == 0 && len(r.Added) == 0 && len(r.Removed) == 0
}

// WriteText writes the result as a short, git-like listing: the compared
// tables, the table's changed fields, then changed, added and removed routes
// by key, each field as `name: old -> new`. It writes nothing when r is
// Empty.
func (r Diff[R]) WriteText(w io.Writer) error {
	if r.Empty() {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ %s\n", r.Old, r.New)
	for _, c := range r.Table {
		writeChange(&b, "", c)
	}
	for _, rc := range r.Changed {
		fmt.Fprintf(&b, "changed: %s\n", rc.Path)
		for _, c := range rc.Changes {
			writeChange(&b, "  ", c)
		}
	}
	for _, a := range r.Added {
		fmt.Fprintf(&b, "added: %s\n", a.key())
	}
	for _, rm := range r.Removed {
		fmt.Fprintf(&b, "removed: %s\n", rm.key())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeChange(b *strings.Builder, indent string, c Change) {
	if delta, ok := setDelta(c.Old, c.New); ok {
		fmt.Fprintf(b, "%s%s: %s", indent, c.Field, delta)
	} else {
		fmt.Fprintf(b, "%s%s: %s -> %s", indent, c.Field, show(c.Old), show(c.New))
	}
	if c.Informational {
		b.WriteString(" (informational)")
	}
	b.WriteString("\n")
}

// show prints a value as the wide route table does: lists comma-separated,
// maps as the flags that set them (name=value, sorted), nothing as <none>.
func show(v any) string {
	s := fmt.Sprint(v)
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Slice:
		parts := make([]string, rv.Len())
		for i := range parts {
			parts[i] = fmt.Sprint(rv.Index(i).Interface())
		}
		s = strings.Join(parts, ",")
	case reflect.Map:
		var parts []string
		for it := rv.MapRange(); it.Next(); {
			parts = append(parts, fmt.Sprintf("%v=%v", it.Key(), it.Value()))
		}
		sort.Strings(parts)
		s = strings.Join(parts, ",")
	}
	if s == "" {
		return "<none>"
	}
	return s
}

// setDelta shows a change of a list or a map as what it lost and gained,
// -item and +item (a map's entries as key=value), sorted: a strategy's
// new hook in a list of fifteen is one word. False when nothing was lost
// or gained (the order changed) or the values are not lists or maps.
func setDelta(old, new any) (string, bool) {
	o, ok1 := items(old)
	n, ok2 := items(new)
	if !ok1 || !ok2 {
		return "", false
	}
	var out []string
	for _, x := range o {
		if !slices.Contains(n, x) {
			out = append(out, "-"+x)
		}
	}
	for _, x := range n {
		if !slices.Contains(o, x) {
			out = append(out, "+"+x)
		}
	}
	if len(out) == 0 {
		return "", false
	}
	return strings.Join(out, " "), true
}

// items are a list's elements or a map's key=value entries, sorted.
func items(v any) ([]string, bool) {
	rv := reflect.ValueOf(v)
	var out []string
	switch rv.Kind() {
	case reflect.Slice:
		for i := range rv.Len() {
			out = append(out, fmt.Sprint(rv.Index(i).Interface()))
		}
	case reflect.Map:
		for it := rv.MapRange(); it.Next(); {
			out = append(out, fmt.Sprintf("%v=%v", it.Key(), it.Value()))
		}
	default:
		return nil, false
	}
	sort.Strings(out)
	return out, true
}
