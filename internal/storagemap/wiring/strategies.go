package wiring

import (
	"reflect"

	"k8s.io/apiserver/pkg/registry/rest"
)

// strategyInterfaces are the interfaces the server's registry asks a
// strategy for, required and optional: a strategy's methods outside them
// (a scheme's, embedded as its ObjectTyper) are not hooks of the store.
var strategyInterfaces = append([]reflect.Type{
	reflect.TypeFor[rest.RESTCreateStrategy](),
	reflect.TypeFor[rest.RESTUpdateStrategy](),
	reflect.TypeFor[rest.RESTDeleteStrategy](),
	reflect.TypeFor[rest.RESTGracefulDeleteStrategy](),
	reflect.TypeFor[rest.GarbageCollectionDeleteStrategy](),
	reflect.TypeFor[rest.ResetFieldsStrategy](),
	reflect.TypeFor[rest.ResetFieldsFilterStrategy](),
	reflect.TypeFor[rest.NamespaceScopedStrategy](),
	reflect.TypeFor[rest.SubresourceObjectMetaPreserver](),
}, releaseStrategyInterfaces...)
