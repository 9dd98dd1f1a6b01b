package routetable

import (
	"cmp"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// HTTPKind is the kind of the document `regctl routes --http -o yaml|json`
// writes. A route table has no kind: it came first.
const HTTPKind = "HTTPRouteTable"

// HTTPFormatVersion is the version of the HTTP route table document, as
// FormatVersion is the route table's.
const HTTPFormatVersion = 1

// HTTPRouteTable is the document `regctl routes --http -o yaml|json`
// prints: every route the server's installer registers for the storage map.
type HTTPRouteTable struct {
	Kind              string          `json:"kind"`
	FormatVersion     int             `json:"formatVersion"`
	KubernetesVersion string          `json:"kubernetesVersion"`
	EmulatedVersion   string          `json:"emulatedVersion,omitempty"`
	FeatureGates      map[string]bool `json:"featureGates,omitempty"`
	Routes            []HTTPRoute     `json:"routes"`
}

// HTTPRoute is one route of the server's go-restful container: a method on
// a path template, and the storage it reaches.
type HTTPRoute struct {
	Method string `json:"method"`
	// Path is the route's template, its parameters named in braces as the
	// server's OpenAPI names them ("{path}", not go-restful's "{path:*}").
	Path string `json:"path"`
	// Action is the installer's, as it records it on the route
	// (x-kubernetes-action): get, list, watch, watchlist, post, put, patch,
	// delete, deletecollection, connect.
	Action string `json:"action"`
	Group  string `json:"group"`
	// Version is the version the path is served under.
	Version string `json:"version"`
	// Resource is the path of the storage map the route reaches, as the
	// installer names it: "pods", "pods/status".
	Resource string `json:"resource"`
	// Kind is the kind the installer records on the route
	// (x-kubernetes-group-version-kind); KindGroupVersion its group version
	// when it is not the route's (pods/eviction: policy/v1).
	Kind             string `json:"kind"`
	KindGroupVersion string `json:"kindGroupVersion,omitempty"`
	// Namespaced is the resource's scope: a namespaced resource's list and
	// watch across namespaces have no {namespace} in their path.
	Namespaced bool `json:"namespaced"`
	// Storage is the Go type of the storage, with its package path.
	Storage string `json:"storage"`
}

func (r HTTPRoute) key() string { return r.Method + " " + r.Path }

// APIVersion is the group version the route is served under.
func (r HTTPRoute) APIVersion() string {
	return Route{Group: r.Group, Version: r.Version}.APIVersion()
}

// Header is the HTTP route table's column header; wide adds the API
// version, kind, scope and the storage's Go type.
func (t HTTPRouteTable) Header(wide bool) []string {
	h := []string{"METHOD", "PATH", "ACTION", "RESOURCE"}
	if wide {
		h = append(h, "APIVERSION", "KIND", "NAMESPACED", "STORAGE")
	}
	return h
}

// Rows projects each route onto the header's columns.
func (t HTTPRouteTable) Rows(wide bool) [][]string {
	rows := make([][]string, 0, len(t.Routes))
	for _, r := range t.Routes {
		row := []string{r.Method, r.Path, r.Action, r.Resource}
		if wide {
			row = append(row, r.APIVersion(), r.Kind, strconv.FormatBool(r.Namespaced), r.Storage)
		}
		rows = append(rows, row)
	}
	return rows
}

// HTTPFilter keeps the routes of some groups, resources and actions; an
// empty list keeps all.
type HTTPFilter struct {
	// Groups as RouteTable.InGroups takes them.
	Groups []string
	// Resources are paths of the map ("pods/status"); a resource
	// ("pods") names its subresources too.
	Resources []string
	Actions   []string
}

// Filter is the table with only the routes f keeps.
func (t HTTPRouteTable) Filter(f HTTPFilter) HTTPRouteTable {
	groups := map[string]bool{}
	for _, g := range f.Groups {
		if g == "core" {
			g = ""
		}
		groups[g] = true
	}
	out := t
	out.Routes = nil
	for _, r := range t.Routes {
		base, _, _ := strings.Cut(r.Resource, "/")
		if (len(groups) == 0 || groups[r.Group]) &&
			(len(f.Resources) == 0 || slices.Contains(f.Resources, r.Resource) || slices.Contains(f.Resources, base)) &&
			(len(f.Actions) == 0 || slices.Contains(f.Actions, r.Action)) {
			out.Routes = append(out.Routes, r)
		}
	}
	return out
}

// Groups lists the API groups of the table's routes in table order, the
// core group as "core".
func (t HTTPRouteTable) Groups() []string {
	return distinct(t.Routes, func(r HTTPRoute) string {
		if r.Group == "" {
			return "core"
		}
		return r.Group
	})
}

// Resources lists the paths of the map the table's routes reach, and their
// resources, sorted.
func (t HTTPRouteTable) Resources() []string {
	var out []string
	for _, r := range t.Routes {
		base, _, _ := strings.Cut(r.Resource, "/")
		out = append(out, r.Resource, base)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Actions lists the installer's actions in the table, sorted.
func (t HTTPRouteTable) Actions() []string {
	out := distinct(t.Routes, func(r HTTPRoute) string { return r.Action })
	slices.Sort(out)
	return out
}

func distinct[R any](routes []R, of func(R) string) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range routes {
		if v := of(r); !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// SortHTTPRoutes sorts the routes of one group version by path, then
// method.
func SortHTTPRoutes(routes []HTTPRoute) {
	slices.SortFunc(routes, func(a, b HTTPRoute) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Method, b.Method))
	})
}

// CompareHTTP is Compare for HTTP route tables: routes are matched by
// method and path.
func CompareHTTP(from, to HTTPRouteTable, filter Filter) HTTPResult {
	return compare(reflect.ValueOf(from), reflect.ValueOf(to), httpTableFields, from.Routes, to.Routes, httpRouteFields, filter)
}
