package routetable

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// field is one compared field: its name in the table document and where it
// is in the Go struct.
type field struct {
	name  string
	index []int
}

// Fields are read from the json tags, so a field added to Route or
// RouteTable is compared, filterable and printed without a change
// here, under the name users see in the yaml.
var (
	tableFields = jsonFields(reflect.TypeFor[RouteTable](),
		// The document's format is not part of the wiring, and routes
		// are compared one by one.
		"formatVersion", "routes")
	routeFields = jsonFields(reflect.TypeFor[Route](),
		// Routes are matched by path, so it never changes.
		"path")
	httpTableFields = jsonFields(reflect.TypeFor[HTTPRouteTable](),
		"kind", "formatVersion", "routes")
	// HTTP routes are matched by method and path.
	httpRouteFields = jsonFields(reflect.TypeFor[HTTPRoute](), "method", "path")
)

// jsonFields are t's fields as encoding/json writes them: an embedded
// struct's fields are the outer one's.
func jsonFields(t reflect.Type, skip ...string) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			for _, inner := range jsonFields(f.Type, skip...) {
				out = append(out, field{name: inner.name, index: append([]int{i}, inner.index...)})
			}
			continue
		}
		if name == "-" || name == "" || slices.Contains(skip, name) {
			continue
		}
		out = append(out, field{name: name, index: []int{i}})
	}
	return out
}

// Fields are the names --only and --ignore accept: the table's fields, then a
// route's, in the order the json tags declare them.
func Fields() []string { return names(tableFields, routeFields) }

// HTTPFields are the names --only and --ignore accept for HTTP route
// tables, in the same order.
func HTTPFields() []string { return names(httpTableFields, httpRouteFields) }

func names(table, route []field) []string {
	var out []string
	for _, f := range table {
		out = append(out, f.name)
	}
	for _, f := range route {
		out = append(out, f.name)
	}
	return out
}

// Filter says which fields count toward a difference. The zero Filter
// counts every field.
type Filter struct {
	only   map[string]bool
	ignore map[string]bool
}

// NewFilter counts the fields in only (all when only is empty) that are not
// in ignore. Unknown names are an error that lists the valid ones.
func NewFilter(only, ignore []string) (Filter, error) {
	return newFilter(Fields(), only, ignore)
}

// NewHTTPFilter is NewFilter for HTTP route tables and their fields.
func NewHTTPFilter(only, ignore []string) (Filter, error) {
	return newFilter(HTTPFields(), only, ignore)
}

func newFilter(valid, only, ignore []string) (Filter, error) {
	f := Filter{}
	var err error
	if f.only, err = fieldSet(valid, "--only", only); err != nil {
		return Filter{}, err
	}
	if f.ignore, err = fieldSet(valid, "--ignore", ignore); err != nil {
		return Filter{}, err
	}
	return f, nil
}

func fieldSet(valid []string, flag string, names []string) (map[string]bool, error) {
	if len(names) == 0 {
		return nil, nil
	}
	set := make(map[string]bool, len(names))
	for _, n := range names {
		if !slices.Contains(valid, n) {
			return nil, fmt.Errorf("unknown field %q in `%s`: valid fields are %s", n, flag, strings.Join(valid, ","))
		}
		set[n] = true
	}
	return set, nil
}

// Counts reports whether a change in the named field makes tables differ.
func (f Filter) Counts(name string) bool {
	if f.only != nil && !f.only[name] {
		return false
	}
	return !f.ignore[name]
}
