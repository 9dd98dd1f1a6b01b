//go:build k8s1.35 || k8s1.36

package wiring

import "reflect"

// releaseStrategyInterfaces: before 1.37 no strategy interface is
// asked for besides the common ones.
var releaseStrategyInterfaces []reflect.Type
