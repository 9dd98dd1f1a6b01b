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
	index int
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
)

func jsonFields(t reflect.Type, skip ...string) []field {
	var out []field
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "-" || name == "" || slices.Contains(skip, name) {
			continue
		}
		out = append(out, field{name: name, index: i})
	}
	return out
}

// Fields are the names --only and --ignore accept: the table's fields, then a
// route's, in the order the json tags declare them.
func Fields() []string {
	var names []string
	for _, f := range tableFields {
		names = append(names, f.name)
	}
	for _, f := range routeFields {
		names = append(names, f.name)
	}
	return names
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
	f := Filter{}
	var err error
	if f.only, err = fieldSet("--only", only); err != nil {
		return Filter{}, err
	}
	if f.ignore, err = fieldSet("--ignore", ignore); err != nil {
		return Filter{}, err
	}
	return f, nil
}

func fieldSet(flag string, names []string) (map[string]bool, error) {
	if len(names) == 0 {
		return nil, nil
	}
	valid := Fields()
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
