package manifest

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// FieldTypeError is a field of a manifest object that holds the wrong kind
// of value, said in the manifest's terms rather than Go's.
type FieldTypeError struct {
	// Path is the field's path in the object, e.g. spec.containers; empty
	// for the object itself.
	Path string
	// Expected and Got describe the values, e.g. "a list" and "a string".
	Expected, Got string
	err           error
}

func (e *FieldTypeError) Error() string {
	msg := "expected " + e.Expected + ", got " + e.Got
	if e.Path == "" {
		return msg
	}
	return e.Path + ": " + msg
}

func (e *FieldTypeError) Unwrap() error { return e.err }

// DecodeError rewords an error of decoding a manifest object into its Go
// type (`json: cannot unmarshal string into Go struct field
// PodSpec.spec.containers of type []v1.Container`) as the field's path, what
// it takes and what it was given (`spec.containers: expected a list, got a
// string`). Other errors are returned as they are.
func DecodeError(err error) error {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if fe, ok := fieldTypeError(e); ok {
			fe.err = err
			return fe
		}
	}
	return err
}

// fieldTypeError reads an UnmarshalTypeError of encoding/json or of the
// copy of it the apiserver's decoder uses (sigs.k8s.io/json), whose type is
// internal to that module: both have the same fields, read here by name.
func fieldTypeError(err error) (*FieldTypeError, bool) {
	v := reflect.ValueOf(err)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct || v.Elem().Type().Name() != "UnmarshalTypeError" {
		return nil, false
	}
	s := v.Elem()
	value, field, typ := s.FieldByName("Value"), s.FieldByName("Field"), s.FieldByName("Type")
	if value.Kind() != reflect.String || field.Kind() != reflect.String || !typ.IsValid() || !typ.CanInterface() {
		return nil, false
	}
	t, ok := typ.Interface().(reflect.Type)
	if !ok || t == nil {
		return nil, false
	}
	return &FieldTypeError{Path: field.String(), Expected: expected(t), Got: got(value.String())}, true
}

// expected says what values a Go type takes, as a manifest writes them.
func expected(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64-encoded string"
		}
		return "a list"
	case reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int:
		return "an integer"
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return fmt.Sprintf("a %d-bit integer", t.Bits())
	case reflect.Uint:
		return "a non-negative integer"
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("a non-negative %d-bit integer", t.Bits())
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "a " + t.Kind().String()
}

// got says what a JSON value the decoder described was: "string", "array",
// "object", "bool", "number", or "number 1.5" for a number out of range.
func got(value string) string {
	switch value {
	case "string":
		return "a string"
	case "array":
		return "a list"
	case "object":
		return "an object"
	case "bool":
		return "a boolean"
	case "number":
		return "a number"
	case "null":
		return "null"
	}
	if n, ok := strings.CutPrefix(value, "number "); ok {
		return n
	}
	return value
}
