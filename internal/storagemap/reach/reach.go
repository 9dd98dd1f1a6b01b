// Package reach tells, from the server's storage objects themselves, which
// generic registry Store each path of an API group version reaches etcd
// through: a Store of its own, another path's (subresources, and resources
// as bindings: shared), or none (componentstatuses).
package reach

import (
	"reflect"
	"slices"
	"sort"
	"strings"

	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/regctl/regctl/internal/routetable"
)

// Path says how one path reaches etcd.
type Path struct {
	Kind       string // routetable.StoreOwn, routetable.StoreShared or routetable.StoreNone
	SharesWith string
	// Store is the generic store whose key prefix and decorator apply.
	Store *genericregistry.Store
}

var storeType = reflect.TypeOf(&genericregistry.Store{})

// Of works out, from the storage objects themselves, which paths are
// stores and which go through another path's store. A resource path owns the
// generic Store it is, embeds or holds for that same resource (pods embeds
// the pods Store; namespaces holds it in a field). Any other path is shared
// when a Store it holds, at any depth, writes through the same etcd storage
// as an owned one: subresources hold copies of their resource's Store
// (pods/status), the resource's REST (services/proxy) or a wrapper of it
// (bindings).
func Of(stores map[string]rest.Storage) map[string]Path {
	paths := make([]string, 0, len(stores))
	for p := range stores {
		paths = append(paths, p)
	}
	sort.Strings(paths)

	out := map[string]Path{}
	ownerOf := map[any]string{} // etcd storage identity → owning path
	for _, p := range paths {
		if strings.Contains(p, "/") {
			continue
		}
		for _, s := range reachableStores(stores[p]) {
			if s.DefaultQualifiedResource.Resource == p {
				out[p] = Path{Kind: routetable.StoreOwn, Store: s}
				ownerOf[identity(s)] = p
				break
			}
		}
	}
	for _, p := range paths {
		if _, ok := out[p]; ok {
			continue
		}
		parent, _, _ := strings.Cut(p, "/")
		var candidates []string
		for _, s := range reachableStores(stores[p]) {
			if o, ok := ownerOf[identity(s)]; ok {
				candidates = append(candidates, o)
			}
		}
		switch {
		case len(candidates) == 0:
			out[p] = Path{Kind: routetable.StoreNone}
		case slices.Contains(candidates, parent) && parent != p:
			out[p] = Path{Kind: routetable.StoreShared, SharesWith: parent, Store: out[parent].Store}
		default:
			out[p] = Path{Kind: routetable.StoreShared, SharesWith: candidates[0], Store: out[candidates[0]].Store}
		}
	}
	return out
}

// identity is the etcd storage a Store writes through. Copies of a Store
// (status and other subresource stores) share it.
func identity(s *genericregistry.Store) any {
	return s.Storage.Storage
}

// maxDepth bounds the walk: every core subresource reaches its store within
// two hops (bindings → BindingREST → Store), and the bound keeps the walk out
// of clients and transports.
const maxDepth = 3

// reachableStores lists the generic Stores a storage object holds, in
// breadth-first order, looking through exported and unexported fields alike.
func reachableStores(storage rest.Storage) []*genericregistry.Store {
	var found []*genericregistry.Store
	seen := map[uintptr]bool{}
	level := []reflect.Value{reflect.ValueOf(storage)}
	for depth := 0; depth <= maxDepth && len(level) > 0; depth++ {
		var next []reflect.Value
		for _, v := range level {
			next = append(next, children(v, storeVisitor(seen, &found))...)
		}
		level = next
	}
	return found
}

func storeVisitor(seen map[uintptr]bool, found *[]*genericregistry.Store) func(reflect.Value) bool {
	return func(v reflect.Value) bool {
		if v.Kind() != reflect.Pointer || v.IsNil() {
			return true
		}
		p := v.Pointer()
		if seen[p] {
			return false
		}
		seen[p] = true
		if v.Type() == storeType {
			// Unexported fields cannot be read through Interface; the
			// pointer itself is all that is needed.
			*found = append(*found, (*genericregistry.Store)(v.UnsafePointer()))
			return false
		}
		return true
	}
}

// children returns the pointers one level below v: the fields of the struct
// v points to (through interfaces), each offered to visit first.
func children(v reflect.Value, visit func(reflect.Value) bool) []reflect.Value {
	for v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	if !visit(v) || v.Kind() != reflect.Pointer || v.IsNil() {
		return nil
	}
	e := v.Elem()
	if e.Kind() != reflect.Struct {
		return nil
	}
	var out []reflect.Value
	var collect func(s reflect.Value)
	collect = func(s reflect.Value) {
		for i := 0; i < s.NumField(); i++ {
			f := s.Field(i)
			for f.Kind() == reflect.Interface && !f.IsNil() {
				f = f.Elem()
			}
			switch f.Kind() {
			case reflect.Pointer:
				if !f.IsNil() {
					out = append(out, f)
				}
			case reflect.Struct:
				collect(f)
			}
		}
	}
	collect(e)
	return out
}

// StoreIn is the Store storage holds that writes through store's etcd
// storage: a subresource's own copy of its resource's store (pods/status'
// has the status strategy), store itself when storage holds none. Its
// strategies, not store's, are what a write to the path runs.
func StoreIn(storage rest.Storage, store *genericregistry.Store) *genericregistry.Store {
	if store == nil {
		return nil
	}
	for _, s := range reachableStores(storage) {
		if identity(s) == identity(store) {
			return s
		}
	}
	return store
}
