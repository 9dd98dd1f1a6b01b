package gocode

import "reflect"

// Method is where the method name of v's dynamic type is defined. A method
// promoted from an embedded field, or a pointer's wrapper of a value
// method, is followed to the code that runs: podStrategy's ObjectKinds is
// (*runtime.Scheme).ObjectKinds, from the runtime.ObjectTyper it embeds.
// False when v has no such method.
func Method(v any, name string) (Location, bool) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return Location{}, false
	}
	m, ok := rv.Type().MethodByName(name)
	if !ok {
		return Location{}, false
	}
	loc := at(m.Func.Pointer())
	for depth := 0; loc.File == "" && depth < 8; depth++ {
		next, ok := definer(rv, name)
		if !ok {
			break
		}
		rv = next
		if m, ok := rv.Type().MethodByName(name); ok {
			loc = at(m.Func.Pointer())
		}
	}
	return loc, true
}

// Defines tells whether v's own type declares the method name, rather than
// promoting it from a field it embeds.
func Defines(v any, name string) bool {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return false
	}
	m, ok := rv.Type().MethodByName(name)
	if !ok {
		return false
	}
	if compiled(m.Func.Pointer()) {
		return true
	}
	// A pointer's wrapper of a method declared on the value type.
	if rv.Kind() == reflect.Pointer {
		if m, ok := rv.Type().Elem().MethodByName(name); ok {
			return compiled(m.Func.Pointer())
		}
	}
	return false
}

// definer is the value whose method name rv's runs: the value rv points
// to when the method is declared on it, else the embedded field that
// brings the method, an interface field's dynamic value. Only types
// matter past a nil pointer: its zero value stands for it.
func definer(rv reflect.Value, name string) (reflect.Value, bool) {
	if rv.Kind() == reflect.Pointer {
		elem := reflect.Zero(rv.Type().Elem())
		if !rv.IsNil() {
			elem = rv.Elem()
		}
		if m, ok := elem.Type().MethodByName(name); ok && compiled(m.Func.Pointer()) {
			return elem, true
		}
		rv = elem
	}
	if rv.Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	for i := range rv.NumField() {
		if !rv.Type().Field(i).Anonymous {
			continue
		}
		fv := rv.Field(i)
		if fv.Kind() == reflect.Interface {
			if fv.IsNil() {
				continue
			}
			fv = fv.Elem()
		}
		if _, ok := fv.Type().MethodByName(name); ok {
			return fv, true
		}
		if _, ok := reflect.PointerTo(fv.Type()).MethodByName(name); ok {
			// A pointer method of an embedded struct: its type is enough.
			return reflect.New(fv.Type()), true
		}
	}
	return reflect.Value{}, false
}
