//go:build !k8s1.35 && !k8s1.36

package wiring

import (
	"reflect"

	"k8s.io/apiserver/pkg/registry/rest"
)

// releaseStrategyInterfaces: 1.37 asks strategies for declarative
// validation.
var releaseStrategyInterfaces = []reflect.Type{reflect.TypeFor[rest.DeclarativeValidationStrategy]()}
