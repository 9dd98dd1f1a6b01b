// Package wiring says how one path of the storage map is wired, from the
// running code: the group's storage provider, the REST storage and the
// constructor that made it, its genericregistry.Store (functions,
// strategies, hooks), what CompleteWithOptions and the RESTOptionsGetter
// gave it, its decorator and the etcd3 store under it, in the order the
// server builds them, each function with its Go name and where it is
// defined (package gocode). Nothing here is a table of what Kubernetes
// does: every value is read off the objects the server's code built.
package wiring

import (
	"fmt"
	"path"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/regctl/regctl/internal/gocode"
	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/storagemap/restoptions"
)

// Of is what the map knows of one path as it was built.
type Of struct {
	Route routetable.Route
	// Provider is what made the path's group.
	Provider Provider
	// Storage is the path's REST storage, Store the generic store it
	// reaches etcd through (nil for a path that never does).
	Storage rest.Storage
	Store   *genericregistry.Store
	// Decision is what the RESTOptionsGetter decided for the store's
	// resource (Found false when no store was completed through it).
	Decision restoptions.Decision
	Found    bool
	// Readers names the providers and keys the resource's values are
	// read with (encryption.Config.ReadersOf).
	Readers string
	// WatchCache says why the server's getter decorated the store as it
	// did: the flags and kube-apiserver's default watch cache sizes.
	WatchCache string
	// EtcdPrefix is --etcd-prefix.
	EtcdPrefix string
	// Loops are the server's flags for what it runs against etcd in the
	// background, which regctl turns off before the getter sees them.
	Loops Loops
}

// Loops are the periods of the server's background work on etcd.
type Loops struct {
	CountMetricPollPeriod, CompactionInterval, DBMetricPollInterval time.Duration
}

// Provider is what made a group's storage: a built-in group's
// RESTStorageProvider, whose NewRESTStorage does; the apiextensions or
// aggregator server's config, whose Method does; or, for custom
// resources, the CRD handler's constructor (Value a function).
type Provider struct {
	Value  any
	Method string
}

// roles are the strategies of a store, in the order a request meets them.
var roles = []struct {
	name  string
	iface reflect.Type
	get   func(*genericregistry.Store) any
}{
	{"create", reflect.TypeFor[rest.RESTCreateStrategy](), func(s *genericregistry.Store) any { return nilIfNil(s.CreateStrategy) }},
	{"update", reflect.TypeFor[rest.RESTUpdateStrategy](), func(s *genericregistry.Store) any { return nilIfNil(s.UpdateStrategy) }},
	{"delete", reflect.TypeFor[rest.RESTDeleteStrategy](), func(s *genericregistry.Store) any { return nilIfNil(s.DeleteStrategy) }},
	{"resetFields", reflect.TypeFor[rest.ResetFieldsStrategy](), func(s *genericregistry.Store) any { return nilIfNil(s.ResetFieldsStrategy) }},
}

func nilIfNil(v any) any {
	if v == nil {
		return nil
	}
	rv := reflect.ValueOf(v)
	if (rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface) && rv.IsNil() {
		return nil
	}
	return v
}

// Stable is the part of the wiring a route table holds: Go types and
// function names, selectable fields, triggers and indexers; no line
// numbers, so that a table changes when the wiring does.
func Stable(w Of) routetable.Wiring {
	out := routetable.Wiring{Provider: providerName(w.Provider)}
	if w.Store == nil {
		return out
	}
	s := w.Store
	out.Constructor = constructor(s)
	out.Strategies = map[string]string{}
	for _, r := range roles {
		if v := r.get(s); v != nil {
			out.Strategies[r.name] = gocode.TypeName(v)
		}
	}
	for _, v := range strategies(s) {
		for _, m := range methods(v) {
			if gocode.Defines(v, m) {
				out.StrategyMethods = append(out.StrategyMethods, shortType(v)+"."+m)
			}
		}
	}
	sort.Strings(out.StrategyMethods)
	out.Funcs = map[string]string{}
	for _, f := range storeFuncs(s) {
		// CompleteWithOptions' defaults (KeyFunc, ObjectNameFunc, ...)
		// are the same for every store: a table names what the registry set.
		name := gocode.Name(f.fn)
		if strings.HasPrefix(name, genericRegistry+".") {
			continue
		}
		out.Funcs[f.name] = stableName(name)
	}
	if w.Found && w.Decision.Call != nil {
		c := w.Decision.Call
		out.SelectableFields, _ = selectableFields(s, c)
		out.Triggers = sortedKeys(c.Triggers)
		if c.Indexers != nil {
			out.Indexers = sortedKeys(*c.Indexers)
		}
	}
	return out
}

// genericRegistry is the package of genericregistry.Store.
var genericRegistry = reflect.TypeFor[genericregistry.Store]().PkgPath()

// stableName names a closure by the function it is declared in: the
// compiler numbers closures (func1, func2) in their order in the file, so
// the numbers change with code that is not the store's.
func stableName(name string) string {
	if enclosing := gocode.Enclosing(name); enclosing != name {
		return enclosing + " closure"
	}
	return name
}

// providerName is the provider's Go type, or the function's name.
func providerName(p Provider) string {
	if p.Value == nil {
		return ""
	}
	if reflect.TypeOf(p.Value).Kind() == reflect.Func {
		return gocode.Name(p.Value)
	}
	return gocode.TypeName(p.Value)
}

// constructor is the function that made the store: the one its NewFunc
// closure is declared in (NewStorage, NewREST), where the registry fills
// in the store's fields.
func constructor(s *genericregistry.Store) string {
	newFunc := gocode.Name(s.NewFunc)
	if name := gocode.Enclosing(newFunc); name != newFunc {
		return name
	}
	// NewFunc is a named function, not a closure of the constructor.
	return ""
}

// strategies are the store's distinct strategy objects, in role order.
func strategies(s *genericregistry.Store) []any {
	var out []any
	for _, r := range roles {
		v := r.get(s)
		if v == nil || slices.ContainsFunc(out, func(o any) bool { return same(o, v) }) {
			continue
		}
		out = append(out, v)
	}
	return out
}

// same tells whether two strategies are one object (most stores use one
// for every role): the same pointer, or values alike field by field (a
// custom resource's strategy is a struct value, copied for each role).
func same(a, b any) bool {
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return false
	}
	return alike(reflect.ValueOf(a), reflect.ValueOf(b), 0)
}

// alike compares what two values hold, references by identity: funcs,
// maps, pointers and slices are alike when they are the same ones.
func alike(a, b reflect.Value, depth int) bool {
	if depth > 8 {
		return false
	}
	switch a.Kind() {
	case reflect.Func, reflect.Map, reflect.Pointer, reflect.Slice, reflect.Chan, reflect.UnsafePointer:
		return a.Pointer() == b.Pointer() && (a.Kind() != reflect.Slice || a.Len() == b.Len())
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return a.Elem().Type() == b.Elem().Type() && alike(a.Elem(), b.Elem(), depth+1)
	case reflect.Struct:
		for i := range a.NumField() {
			if !alike(a.Field(i), b.Field(i), depth+1) {
				return false
			}
		}
		return true
	case reflect.Array:
		for i := range a.Len() {
			if !alike(a.Index(i), b.Index(i), depth+1) {
				return false
			}
		}
		return true
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float()
	case reflect.Complex64, reflect.Complex128:
		return a.Complex() == b.Complex()
	case reflect.String:
		return a.String() == b.String()
	}
	return false
}

// methods are v's methods of the strategy interfaces, sorted.
func methods(v any) []string {
	t := reflect.TypeOf(v)
	var out []string
	for _, iface := range strategyInterfaces {
		for i := range iface.NumMethod() {
			name := iface.Method(i).Name
			if _, ok := t.MethodByName(name); ok && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// shortType is a strategy's type without its package path: podStrategy.
func shortType(v any) string {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

// storeFunc is one function field of the store that is set.
type storeFunc struct {
	name string
	fn   any
}

// storeFuncs are the store's function fields that are set, in the
// order Store declares them: the registry's own or CompleteWithOptions'
// defaults. DestroyFunc and ReadinessCheckFunc are the decorated
// storage's, regctl's own in place of the decorator the server picked
// (the decorator step names it).
func storeFuncs(s *genericregistry.Store) []storeFunc {
	v := reflect.ValueOf(s).Elem()
	var out []storeFunc
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if !f.IsExported() || f.Type.Kind() != reflect.Func || v.Field(i).IsNil() || f.Name == "DestroyFunc" || f.Name == "ReadinessCheckFunc" {
			continue
		}
		out = append(out, storeFunc{name: f.Name, fn: v.Field(i).Interface()})
	}
	return out
}

// selectableFields are the fields a field selector can use on the path's
// objects: those the store's attribute function gives for a new object.
func selectableFields(s *genericregistry.Store, c *restoptions.DecoratorCall) ([]string, error) {
	if c.AttrFunc == nil || s.NewFunc == nil {
		return nil, nil
	}
	_, fields, err := c.AttrFunc(s.NewFunc())
	if err != nil {
		return nil, err
	}
	return sortedKeys(fields), nil
}

func sortedKeys[V any, M ~map[string]V](m M) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// keyPattern is the key the store's function gives an object, under
// --etcd-prefix, with {namespace} and {name} for what varies.
func keyPattern(w Of, root bool) string {
	ctx := genericapirequest.NewContext()
	if w.Route.Scope == "Namespaced" {
		ctx = genericapirequest.WithNamespace(ctx, "{namespace}")
	}
	var key string
	if root {
		key = w.Store.KeyRootFunc(ctx)
	} else {
		var err error
		if key, err = w.Store.KeyFunc(ctx, "{name}"); err != nil {
			return "error: " + err.Error()
		}
	}
	return path.Join("/", w.EtcdPrefix, key)
}

// typeOf names what a function returns for a new object (NewFunc's
// *core.Pod).
func typeOf(fn func() runtime.Object) string {
	if fn == nil {
		return ""
	}
	return gocode.TypeName(fn())
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func fmtBool(b bool) string { return fmt.Sprint(b) }
