package served

import (
	"path"
	"reflect"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/storagemap/reach"
	"github.com/regctl/regctl/internal/storagemap/restoptions"
	"github.com/regctl/regctl/internal/storagemap/wiring"
)

// RoutePath names a path of the map as kubectl names resources:
// resource.group for a group's preferred version, resource.version.group for
// the others, and core resources by name alone; a subresource follows its
// resource after a slash ("deployments.apps/scale").
func RoutePath(v Version, installerPath string) string {
	resource, sub, isSub := strings.Cut(installerPath, "/")
	name := resource
	if !v.Preferred {
		name += "." + v.GV.Version
	}
	if v.GV.Group != "" {
		name += "." + v.GV.Group
	}
	if isSub {
		name += "/" + sub
	}
	return name
}

// Routes joins the storage map, the server's discovery and the recorded
// storage decisions into one record per path: groups in the server's order,
// each group's versions by priority, paths sorted within a version.
func Routes(versions []Version, reached map[string]reach.Path, getter *restoptions.Getter) []routetable.Route {
	var out []routetable.Route
	for _, v := range versions {
		byPath := map[string]metav1.APIResource{}
		for _, r := range v.Resources {
			byPath[r.Name] = r
		}
		var group []routetable.Route
		for p, storage := range v.Installed() {
			d := byPath[p]
			resource, sub, _ := strings.Cut(p, "/")
			r := routetable.Route{
				Path:               RoutePath(v, p),
				Resource:           resource,
				Subresource:        sub,
				Group:              v.GV.Group,
				Version:            v.GV.Version,
				Kind:               d.Kind,
				Scope:              scope(d.Namespaced),
				Verbs:              d.Verbs,
				ShortNames:         d.ShortNames,
				Categories:         d.Categories,
				Storage:            TypeName(storage),
				StorageVersionHash: d.StorageVersionHash,
				Decorator:          routetable.DecoratorNone,
			}
			if kindGV := (schema.GroupVersion{Group: d.Group, Version: d.Version}); kindGV != v.GV {
				r.KindGroupVersion = kindGV.String()
			}
			o := reached[r.Path]
			r.Store, r.SharesWith = o.Kind, o.SharesWith
			if o.Store != nil {
				qr := o.Store.DefaultQualifiedResource
				if dec, ok := getter.Decision(qr); ok {
					root := o.Store.KeyRootFunc(genericapirequest.NewContext())
					r.KeyPrefix = path.Join("/", dec.EtcdPrefix, root) + "/"
					r.Decorator = dec.Decorator
					r.StorageVersion = dec.StorageVersion
					r.MediaType = dec.MediaType
					r.EtcdServers = dec.EtcdServers
					r.Encryption = dec.Encryption
				}
			}
			group = append(group, r)
		}
		sort.Slice(group, func(i, j int) bool { return group[i].Path < group[j].Path })
		out = append(out, group...)
	}
	return out
}

// Wire fills in each route's wiring (routetable.Wiring) from the stores
// of versions: what reading it costs (reflection over every store) is
// paid by the commands that print or compare route tables only.
func Wire(routes []routetable.Route, versions []Version, reached map[string]reach.Path, getter *restoptions.Getter) {
	index := make(map[string]int, len(routes))
	for i, r := range routes {
		index[r.Path] = i
	}
	for _, v := range versions {
		for p, storage := range v.Installed() {
			i, ok := index[RoutePath(v, p)]
			if !ok {
				continue
			}
			o := reached[routes[i].Path]
			w := wiring.Of{Route: routes[i], Provider: v.Provider, Storage: storage, Store: reach.StoreIn(storage, o.Store)}
			if o.Store != nil {
				w.Decision, w.Found = getter.Decision(o.Store.DefaultQualifiedResource)
			}
			routes[i].Wiring = wiring.Stable(w)
		}
	}
}

func scope(namespaced bool) string {
	if namespaced {
		return "Namespaced"
	}
	return "Cluster"
}

// Adapter is a storage of regctl's around one of the server's, which the
// route table names instead (a custom resource's status and scale). The
// method is exported: an interface with an unexported method is met by
// no type of another package.
type Adapter interface {
	Upstream() any
}

// TypeName is the Go type of a storage, with its package path.
func TypeName(v any) string {
	if a, ok := v.(Adapter); ok {
		v = a.Upstream()
	}
	t := reflect.TypeOf(v)
	prefix := ""
	for t.Kind() == reflect.Pointer {
		prefix += "*"
		t = t.Elem()
	}
	return prefix + t.PkgPath() + "." + t.Name()
}
