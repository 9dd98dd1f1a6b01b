package storagemap

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints"

	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/storagemap/served"
)

// HTTPRoutes reads back every route the installer registered in the map's
// container, as kube-apiserver's handler serves them: the action and kind
// are the ones the installer records on each route, not re-derived. Custom
// resources, which the CRD handler serves, and aggregated APIs, which the
// aggregator proxies, have none. A map built for some resources only
// (Config.Only) has not installed every version: it is refused rather than
// read in part.
func (m *Map) HTTPRoutes() (routetable.HTTPRouteTable, error) {
	t := routetable.HTTPRouteTable{
		Kind:              routetable.HTTPKind,
		FormatVersion:     routetable.HTTPFormatVersion,
		KubernetesVersion: m.Table.KubernetesVersion,
		EmulatedVersion:   m.Table.EmulatedVersion,
		FeatureGates:      m.Table.FeatureGates,
		Routes:            []routetable.HTTPRoute{},
	}
	services := m.container.RegisteredWebServices()
	for _, v := range m.versions {
		if v.Info == nil {
			continue
		}
		if v.Resources == nil || v.Partial {
			return t, fmt.Errorf("reading the HTTP routes of %s: the map was built for some resources only, and %s is not installed whole", v.GV, v.GV)
		}
		root := path.Join(v.Root, v.GV.Group, v.GV.Version)
		namespaced := map[string]bool{}
		for _, r := range v.Resources {
			namespaced[r.Name] = r.Namespaced
		}
		var routes []routetable.HTTPRoute
		for _, ws := range services {
			if ws.RootPath() != root {
				continue
			}
			for _, route := range ws.Routes() {
				action, ok := route.Metadata[endpoints.RouteMetaAction].(string)
				if !ok {
					// The version's discovery, which reaches no storage.
					continue
				}
				gvk, ok := route.Metadata[endpoints.RouteMetaGVK].(metav1.GroupVersionKind)
				if !ok {
					return t, fmt.Errorf("reading route %s %s: it has no %s", route.Method, route.Path, endpoints.RouteMetaGVK)
				}
				storagePath, err := storagePathOf(strings.TrimPrefix(route.Path, root+"/"))
				if err != nil {
					return t, fmt.Errorf("reading route %s %s: %w", route.Method, route.Path, err)
				}
				storage, ok := v.Stores[storagePath]
				if !ok {
					return t, fmt.Errorf("reading route %s %s: %s is not a path of %s", route.Method, route.Path, storagePath, v.GV)
				}
				r := routetable.HTTPRoute{
					Method:     route.Method,
					Path:       openAPITemplate(route.Path),
					Action:     action,
					Group:      v.GV.Group,
					Version:    v.GV.Version,
					Resource:   storagePath,
					Kind:       gvk.Kind,
					Namespaced: namespaced[storagePath],
					Storage:    served.TypeName(storage),
				}
				if kindGV := (schema.GroupVersion{Group: gvk.Group, Version: gvk.Version}); kindGV != v.GV {
					r.KindGroupVersion = kindGV.String()
				}
				routes = append(routes, r)
			}
		}
		routetable.SortHTTPRoutes(routes)
		t.Routes = append(t.Routes, routes...)
	}
	return t, nil
}

// storagePathOf is the path of the storage map a route of a version reaches,
// from the route's path under the version's root, as the installer builds
// them: [watch/][namespaces/{namespace}/]resource[/{name}[/subresource]],
// and a connecter's or a getter's subpath after them.
func storagePathOf(rel string) (string, error) {
	rel = strings.TrimPrefix(rel, "watch/")
	// The namespace's own routes name it {name}, not {namespace}.
	rel = strings.TrimPrefix(rel, "namespaces/{namespace}/")
	parts := strings.Split(rel, "/")
	if parts[0] == "" || strings.HasPrefix(parts[0], "{") {
		return "", fmt.Errorf("no resource in %q", rel)
	}
	if len(parts) >= 3 && parts[1] == "{name}" && !strings.HasPrefix(parts[2], "{") {
		return parts[0] + "/" + parts[2], nil
	}
	return parts[0], nil
}

// paramPattern is a go-restful path parameter with a pattern, "{path:*}".
var paramPattern = regexp.MustCompile(`\{([^}:]+):[^}]*\}`)

// openAPITemplate is a go-restful path template as the server's OpenAPI
// prints it: parameters by name alone.
func openAPITemplate(p string) string {
	return paramPattern.ReplaceAllString(p, "{$1}")
}
