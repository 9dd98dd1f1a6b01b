package extensions

import (
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/endpoints/handlers"
)

// handlerOf and infoOf are CRD handlers and serving infos of another
// apiextensions-apiserver than this build's: the fields regctl reads by
// name, some missing or of another type.
type (
	handlerOf[I any] struct {
		customStorage atomic.Value // map[types.UID]*I
	}
	renamed struct {
		storages map[string]customresource.CustomResourceStorage
	}
	retyped struct {
		storages            map[string]customresource.CustomResourceStorage
		requestScopes       map[string]*handlers.RequestScope
		statusRequestScopes map[string]*handlers.RequestScope
		scaleRequestScopes  map[string]*handlers.RequestScope
		warnings            []string
	}
	complete struct {
		storages            map[string]customresource.CustomResourceStorage
		requestScopes       map[string]*handlers.RequestScope
		statusRequestScopes map[string]*handlers.RequestScope
		scaleRequestScopes  map[string]*handlers.RequestScope
		warnings            map[string][]string
	}
)

func handlerWith[I any](uid types.UID, info *I) *handlerOf[I] {
	h := &handlerOf[I]{}
	h.customStorage.Store(map[types.UID]*I{uid: info})
	return h
}

// TestTheHandlersFieldsAreReadByNameAndType: what the CRD handler built is
// read from its unexported fields when each has the name and type regctl
// expects, and a change of either in apiextensions-apiserver is an error
// that names the field, not a crash or a wrong value.
func TestTheHandlersFieldsAreReadByNameAndType(t *testing.T) {
	const uid = types.UID("u")
	scope := &handlers.RequestScope{}
	info := &complete{
		storages:      map[string]customresource.CustomResourceStorage{"v1": {}},
		requestScopes: map[string]*handlers.RequestScope{"v1": scope},
		warnings:      map[string][]string{"v1": {"deprecated"}},
	}
	storages, scopes, warnings, err := servingInfo(handlerWith(uid, info), uid)
	if err != nil || len(storages) != 1 || scopes.resource["v1"] != scope || scopes.status != nil || warnings["v1"][0] != "deprecated" {
		t.Errorf("a handler of this build: %v, %v, %v, %v", storages, scopes, warnings, err)
	}

	for _, c := range []struct {
		name    string
		handler any
		uid     types.UID
		want    string
	}{
		{"not a pointer", complete{}, uid, "the CRD handler is a extensions.complete"},
		{"no such UID", handlerWith(uid, info), "other", "built no storage for CRD other"},
		{"a field renamed", handlerWith(uid, &renamed{}), uid, "requestScopes is not a map[string]*handlers.RequestScope"},
		{"a field retyped", handlerWith(uid, &retyped{}), uid, "warnings is not a map[string][]string"},
		{"storage keyed otherwise", &handlerOf[complete]{}, uid, "storage map is a"},
	} {
		if c.name == "storage keyed otherwise" {
			c.handler.(*handlerOf[complete]).customStorage.Store(map[string]*complete{})
		}
		_, _, _, err := servingInfo(c.handler, c.uid)
		if err == nil || !strings.HasPrefix(err.Error(), "regctl bug: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}

// TestAFieldIsReadInPlace: fieldOf points into the struct itself, so what
// the handler built is what regctl uses.
func TestAFieldIsReadInPlace(t *testing.T) {
	info := &complete{}
	p, err := fieldOf[map[string][]string](reflect.ValueOf(info).Elem(), "warnings")
	if err != nil {
		t.Fatal(err)
	}
	*p = map[string][]string{"v1": {"set through the pointer"}}
	if info.warnings["v1"] == nil {
		t.Error("fieldOf returned a copy")
	}
	if _, err := fieldOf[map[string][]string](reflect.ValueOf(*info), "warnings"); err == nil {
		t.Error("a field of a struct that cannot be addressed")
	}
}
