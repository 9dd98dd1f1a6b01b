// Package itemjson writes the items of a List as kubectl get -o json
// prints them, in one pass (typedJSON), checked against encoding/json on a
// probe at first use.
package itemjson

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// typedJSON writes a typed Go object as kubectl prints it with -o json:
// encoding/json's encoding of it, with the members of every object in key
// order (as kubectl's unstructured objects come out) and indented as
// json.MarshalIndent indents. It does in one pass what json.Marshal,
// appendSortedKeys and appendIndent do in three, which is most of the cost
// of printing a long list: each type gets a plan once, with its fields
// already in name order, and values are read through the plan without
// reflection.
//
// The plans follow encoding/json's rules for the types Kubernetes' APIs are
// made of (structs with embedded structs, pointers, slices, string-keyed
// maps, strings, integers, booleans, json.Marshaler). Whatever else a type
// holds (floats, interfaces, TextMarshalers, arrays, embedded pointers,
// conflicting field names, the ",string" option) is encoded by encoding/json
// itself, then sorted and indented, so the output is the same either way.
// kubectl prints Go values it read from JSON, not the JSON: raw JSON that a
// Marshaler writes as it holds it (a raw extension, a CRD's default) comes
// out with its numbers and escapes as encoding/json writes those values,
// and one member of a repeated name, so such JSON is read and written again
// as kubectl does.
//
// ListWriter uses it only once it has written, on a probe, what the plain
// path writes (itemJSON).
//
// The output is passed from plan to plan, not kept in the encoder: storing
// it into a heap object on every append would cost a write barrier each
// time while the collector runs.
type typedJSON struct {
	depth  int
	margin int // spaces before every line but the first
	sorter keySorter
	// sorted holds a value encoding/json encoded, sorted.
	sorted []byte
	// freeEntries are slices reused to sort maps' members.
	freeEntries [][]mapEntry
}

// append appends obj as kubectl prints it as an item of a list: as
// json.MarshalIndent(obj, margin spaces, "    ") would write its
// unstructured form. A pointer to a typed object is written through its
// type's plan; anything else (an unstructured object) through encoding/json,
// then sorted and indented.
func (e *typedJSON) append(dst []byte, obj any, margin int) ([]byte, error) {
	e.depth, e.margin = 0, margin
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		compact, err := json.Marshal(obj)
		if err != nil {
			return dst, fmt.Errorf("encoding json: %w", err)
		}
		return e.appendEncoded(dst, compact), nil
	}
	out, err := e.encode(planFor(v.Type().Elem(), true), dst, v.UnsafePointer())
	if err != nil {
		return dst, fmt.Errorf("encoding json: %w", err)
	}
	return out, nil
}

func (e *typedJSON) encode(p *plan, b []byte, ptr unsafe.Pointer) (out []byte, err error) {
	defer func() {
		// A Marshaler of the object may panic on what it holds, as it
		// would in encoding/json.
		if r := recover(); r != nil {
			out, err = b, fmt.Errorf("%v", r)
		}
	}()
	return p.encode(e, b, ptr)
}

// spaces is enough spaces for any line's indentation.
var spaces = strings.Repeat(" ", 256)

func (e *typedJSON) newline(b []byte) []byte {
	n := e.margin + 4*e.depth
	b = append(b, '\n')
	for n > len(spaces) {
		b = append(b, spaces...)
		n -= len(spaces)
	}
	return append(b, spaces[:n]...)
}

// plan encodes one type at a pointer to a value of it.
type plan struct {
	encode func(e *typedJSON, b []byte, p unsafe.Pointer) ([]byte, error)
	// empty is encoding/json's isEmptyValue, for omitempty.
	empty func(p unsafe.Pointer) bool
}

type planKey struct {
	t reflect.Type
	// addressable: a pointer receiver's MarshalJSON is called only on a
	// value encoding/json can take the address of (not a map's values).
	addressable bool
}

var (
	plansMu sync.Mutex
	plans   = map[planKey]*plan{}
)

// planFor returns t's plan. A plan is stored before it is filled, so that a
// recursive type's plan refers to itself.
func planFor(t reflect.Type, addressable bool) *plan {
	plansMu.Lock()
	defer plansMu.Unlock()
	return planLocked(t, addressable)
}

func planLocked(t reflect.Type, addressable bool) *plan {
	key := planKey{t, addressable}
	if p, ok := plans[key]; ok {
		return p
	}
	p := &plan{}
	plans[key] = p
	build(p, t, addressable)
	return p
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	isZeroerType      = reflect.TypeFor[interface{ IsZero() bool }]()
)

// build fills p in encoding/json's order of precedence: Marshalers first,
// then the kind.
func build(p *plan, t reflect.Type, addressable bool) {
	p.empty = emptyFunc(t)
	if t.Kind() != reflect.Pointer {
		switch {
		case t.Implements(marshalerType), addressable && reflect.PointerTo(t).Implements(marshalerType):
			p.encode = marshalerEncoder(t)
			return
		case t.Implements(textMarshalerType), addressable && reflect.PointerTo(t).Implements(textMarshalerType):
			p.encode = fallbackEncoder(t, addressable)
			return
		}
	}
	switch t.Kind() {
	case reflect.Bool:
		p.encode = func(e *typedJSON, b []byte, ptr unsafe.Pointer) ([]byte, error) {
			b = strconv.AppendBool(b, *(*bool)(ptr))
			return b, nil
		}
	case reflect.Int:
		p.encode = intEncoder[int]()
	case reflect.Int8:
		p.encode = intEncoder[int8]()
	case reflect.Int16:
		p.encode = intEncoder[int16]()
	case reflect.Int32:
		p.encode = intEncoder[int32]()
	case reflect.Int64:
		p.encode = intEncoder[int64]()
	case reflect.Uint:
		p.encode = uintEncoder[uint]()
	case reflect.Uint8:
		p.encode = uintEncoder[uint8]()
	case reflect.Uint16:
		p.encode = uintEncoder[uint16]()
	case reflect.Uint32:
		p.encode = uintEncoder[uint32]()
	case reflect.Uint64:
		p.encode = uintEncoder[uint64]()
	case reflect.Uintptr:
		p.encode = uintEncoder[uintptr]()
	case reflect.String:
		p.encode = func(e *typedJSON, b []byte, ptr unsafe.Pointer) ([]byte, error) {
			b = appendJSONString(b, *(*string)(ptr))
			return b, nil
		}
	case reflect.Pointer:
		elem := planLocked(t.Elem(), true)
		p.encode = func(e *typedJSON, b []byte, ptr unsafe.Pointer) ([]byte, error) {
			to := *(*unsafe.Pointer)(ptr)
			if to == nil {
				b = append(b, "null"...)
				return b, nil
			}
			return elem.encode(e, b, to)
		}
	case reflect.Slice:
		p.encode = sliceEncoder(t, addressable)
	case reflect.Map:
		p.encode = mapEncoder(t)
	case reflect.Struct:
		p.encode = structEncoder(t, addressable)
	default:
		// Floats, complex numbers, interfaces, arrays, channels and
		// functions: encoding/json decides.
		p.encode = fallbackEncoder(t, addressable)
	}
}

type signed interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64
}

type unsigned interface {
	~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr
}

func intEncoder[T signed]() func(*typedJSON, []byte, unsafe.Pointer) ([]byte, error) {
	return func(e *typedJSON, b []byte, ptr unsafe.Pointer) ([]byte, error) {
		b = strconv.AppendInt(b, int64(*(*T)(ptr)), 10)
		return b, nil
	}
}

func uintEncoder[T unsigned]() func(*typedJSON, []byte, unsafe.Pointer) ([]byte, error) {
	return func(e *typedJSON, b []byte, ptr unsafe.Pointer) ([]byte, error) {
		v := uint64(*(*T)(ptr))
		if v > math.MaxInt64 {
			// kubectl reads it back as a float64.
			return append(b, kubectlsNumber(strconv.AppendUint(nil, v, 10))...), nil
		}
		b = strconv.AppendUint(b, v, 10)
		return b, nil
	}
}

// emptyFunc is encoding/json's isEmptyValue for values of t.
func emptyFunc(t reflect.Type) func(unsafe.Pointer) bool {
	switch t.Kind() {
	case reflect.String:
		return func(p unsafe.Pointer) bool { return len(*(*string)(p)) == 0 }
	case reflect.Slice:
		return func(p unsafe.Pointer) bool { return (*sliceHeader)(p).len == 0 }
	case reflect.Map:
		return func(p unsafe.Pointer) bool { return reflect.NewAt(t, p).Elem().Len() == 0 }
	case reflect.Pointer:
		return func(p unsafe.Pointer) bool { return *(*unsafe.Pointer)(p) == nil }
	case reflect.Array:
		empty := t.Len() == 0
		return func(unsafe.Pointer) bool { return empty }
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface:
		return func(p unsafe.Pointer) bool { return reflect.NewAt(t, p).Elem().IsZero() }
	}
	return func(unsafe.Pointer) bool { return false }
}

// sliceHeader is how Go lays out a slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

func sliceEncoder(t reflect.Type, addressable bool) func(*typedJSON, []byte, unsafe.Pointer) ([]byte, error) {
	elemType := t.Elem()
	if elemType.Kind() == reflect.Uint8 {
		pe := reflect.PointerTo(elemType)
		if !pe.Implements(marshalerType) && !pe.Implements(textMarshalerType) {
			// []byte: a base64 string.
			return func(e *typedJSON, b []byte, ptr unsafe.Pointer) ([]byte, error) {
				h := (*sliceHeader)(ptr)
				if h.data == nil {
					b = append(b, "null"...)
					return b, nil
				}
				b = append(b, '"')
				b = base64.StdEncoding.AppendEncode(b, unsafe.Slice((*byte)(h.data), h.len))
				return append(b, '"'), nil
			}
		}
		return fallbackEncoder(t, addressable)
	}
	// A slice's elements are addressable whatever holds the slice.
	elem := planLocked(elemType, true)
	size := elemType.Size()
	return func(e *typedJSON, b []byte, ptr unsafe.Pointer) ([]byte, error) {
		h := (*sliceHeader)(ptr)
		if h.data == nil {
			b = append(b, "null"...)
			return b, nil
		}
		if h.len == 0 {
			b = append(b, "[]"...)
			return b, nil
		}
		b = append(b, '[')
		e.depth++
		for i := 0; i < h.len; i++ {
			if i > 0 {
				b = append(b, ',')
			}
			b = e.newline(b)
			var err error
			if b, err = elem.encode(e, b, unsafe.Add(h.data, uintptr(i)*size)); err != nil {
				return b, err
			}
		}
		e.depth--
		b = e.newline(b)
		b = append(b, ']')
		return b, nil
	}
}

var stringMapType = reflect.TypeFor[map[string]string]()

// mapEntry is one member of a map being written: its key, and its value
// (a string map's) or where its value was copied to.
type mapEntry struct {
	key, value string
	at         int
}

// mapEncoder writes a map with string keys in key order, as encoding/json
// does. A map's values are not addressable.
func mapEncoder(t reflect.Type) func(*typedJSON, []byte, unsafe.Pointer) ([]byte, error) {
	if t.Key().Kind() != reflect.String {
		return fallbackEncoder(t, false)
	}
	if t == stringMapType {
		return func(e *typedJSON, b []byte, ptr unsafe.Pointer) ([]byte, error) {
			m := *(*map[string]string)(ptr)
			if m == nil {
				b = append(b, "null"...)
				return b, nil
			}
			entries := e.takeEntries()
			for k, v := range m {
				entries = append(entries, mapEntry{key: k, value: v})
			}
			sortEntries(entries)
			b = e.openObject(b, len(entries))
			for i, en := range entries {
				b = e.member(b, i, en.key)
				b = appendJSONString(b, en.value)
			}
			b = e.closeObject(b, len(entries))
			e.giveEntries(entries)
			return b, nil
		}
	}
	elemType := t.Elem()
	elem := planLocked(elemType, false)
	size := elemType.Size()
	sliceType := reflect.SliceOf(elemType)
	return func(e *typedJSON, b []byte, ptr unsafe.Pointer) ([]byte, error) {
		m := reflect.NewAt(t, ptr).Elem()
		if m.IsNil() {
			b = append(b, "null"...)
			return b, nil
		}
		// The values are copied out, in iteration order, to be written
		// in key order.
		values := reflect.MakeSlice(sliceType, m.Len(), m.Len())
		entries := e.takeEntries()
		iter := m.MapRange()
		for i := 0; iter.Next(); i++ {
			entries = append(entries, mapEntry{key: iter.Key().String(), at: i})
			values.Index(i).SetIterValue(iter)
		}
		sortEntries(entries)
		base := values.UnsafePointer()
		b = e.openObject(b, len(entries))
		for i, en := range entries {
			b = e.member(b, i, en.key)
			var err error
			if b, err = elem.encode(e, b, unsafe.Add(base, uintptr(en.at)*size)); err != nil {
				return b, err
			}
		}
		b = e.closeObject(b, len(entries))
		e.giveEntries(entries)
		return b, nil
	}
}

func sortEntries(entries []mapEntry) {
	slices.SortFunc(entries, func(a, b mapEntry) int { return strings.Compare(a.key, b.key) })
}

// takeEntries lends an empty slice for one map's members; maps nest, so
// each level takes its own and gives it back when done.
func (e *typedJSON) takeEntries() []mapEntry {
	n := len(e.freeEntries)
	if n == 0 {
		return nil
	}
	s := e.freeEntries[n-1]
	e.freeEntries = e.freeEntries[:n-1]
	return s[:0]
}

func (e *typedJSON) giveEntries(s []mapEntry) {
	clear(s) // the keys and values belong to the object
	e.freeEntries = append(e.freeEntries, s[:0])
}

func (e *typedJSON) openObject(b []byte, n int) []byte {
	if n == 0 {
		return append(b, "{}"...)
	}
	e.depth++
	return append(b, '{')
}

func (e *typedJSON) closeObject(b []byte, n int) []byte {
	if n == 0 {
		return b
	}
	e.depth--
	b = e.newline(b)
	return append(b, '}')
}

// member starts the i-th member of an object, named key.
func (e *typedJSON) member(b []byte, i int, key string) []byte {
	if i > 0 {
		b = append(b, ',')
	}
	b = e.newline(b)
	b = appendJSONString(b, key)
	return append(b, ':', ' ')
}

// field is one member a struct's plan may write.
type field struct {
	name   string // quoted, followed by ": "
	offset uintptr
	plan   *plan
	// omit reports a value omitempty or omitzero leaves out; nil when
	// neither is set.
	omit func(unsafe.Pointer) bool
}

func structEncoder(t reflect.Type, addressable bool) func(*typedJSON, []byte, unsafe.Pointer) ([]byte, error) {
	fields, ok := structFields(t, addressable)
	if !ok {
		return fallbackEncoder(t, addressable)
	}
	return func(e *typedJSON, b []byte, ptr unsafe.Pointer) ([]byte, error) {
		n := 0
		for i := range fields {
			f := &fields[i]
			fp := unsafe.Add(ptr, f.offset)
			if f.omit != nil && f.omit(fp) {
				continue
			}
			if n == 0 {
				b = append(b, '{')
				e.depth++
			} else {
				b = append(b, ',')
			}
			n++
			b = e.newline(b)
			b = append(b, f.name...)
			var err error
			if b, err = f.plan.encode(e, b, fp); err != nil {
				return b, err
			}
		}
		if n == 0 {
			b = append(b, "{}"...)
			return b, nil
		}
		b = e.closeObject(b, n)
		return b, nil
	}
}

// structFields lists the members encoding/json writes for t, in name order;
// ok is false for what the plans leave to encoding/json: embedded
// pointers, the ",string" option, names that need escaping, and names that
// occur more than once (which encoding/json resolves by Go's rules for
// embedded fields).
func structFields(t reflect.Type, addressable bool) (fields []field, ok bool) {
	var walk func(t reflect.Type, base uintptr) bool
	walk = func(t reflect.Type, base uintptr) bool {
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if sf.Anonymous {
				ft := sf.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if !sf.IsExported() && ft.Kind() != reflect.Struct {
					continue
				}
			} else if !sf.IsExported() {
				continue
			}
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if sf.Anonymous && name == "" {
				if sf.Type.Kind() != reflect.Struct {
					return false // an embedded pointer: promoted only when not nil
				}
				if !walk(sf.Type, base+sf.Offset) {
					return false
				}
				continue
			}
			if name == "" {
				name = sf.Name
			}
			if !plainName(name) || hasOption(opts, "string") {
				return false
			}
			f := field{
				name:   `"` + name + `": `,
				offset: base + sf.Offset,
				plan:   planLocked(sf.Type, addressable),
			}
			omitEmpty, omitZero := hasOption(opts, "omitempty"), hasOption(opts, "omitzero")
			f.omit = omitFunc(sf.Type, f.plan, omitEmpty, omitZero)
			fields = append(fields, f)
		}
		return true
	}
	if !walk(t, 0) {
		return nil, false
	}
	slices.SortFunc(fields, func(a, b field) int { return strings.Compare(a.name, b.name) })
	for i := 1; i < len(fields); i++ {
		if fields[i].name == fields[i-1].name {
			return nil, false
		}
	}
	return fields, true
}

// plainName is a member name written as it is: no escaping, and sorting
// its quoted form sorts the names.
func plainName(name string) bool {
	for _, c := range []byte(name) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.' || c == '$') {
			return false
		}
	}
	return name != ""
}

func hasOption(opts, name string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == name {
			return true
		}
	}
	return false
}

// omitFunc reports the values omitempty and omitzero leave out, as
// encoding/json decides.
func omitFunc(t reflect.Type, p *plan, omitEmpty, omitZero bool) func(unsafe.Pointer) bool {
	var zero func(unsafe.Pointer) bool
	if omitZero {
		zero = zeroFunc(t)
	}
	switch {
	case omitEmpty && omitZero:
		return func(ptr unsafe.Pointer) bool { return p.empty(ptr) || zero(ptr) }
	case omitEmpty:
		return p.empty
	case omitZero:
		return zero
	}
	return nil
}

// zeroFunc is omitzero's test: the type's IsZero method, else the zero
// value.
func zeroFunc(t reflect.Type) func(unsafe.Pointer) bool {
	switch {
	case t.Kind() == reflect.Interface && t.Implements(isZeroerType):
		return func(p unsafe.Pointer) bool {
			v := reflect.NewAt(t, p).Elem()
			return v.IsNil() || (v.Elem().Kind() == reflect.Pointer && v.Elem().IsNil()) ||
				v.Interface().(interface{ IsZero() bool }).IsZero()
		}
	case t.Kind() == reflect.Pointer && t.Implements(isZeroerType):
		return func(p unsafe.Pointer) bool {
			v := reflect.NewAt(t, p).Elem()
			return v.IsNil() || v.Interface().(interface{ IsZero() bool }).IsZero()
		}
	case t.Implements(isZeroerType), reflect.PointerTo(t).Implements(isZeroerType):
		// Through a pointer to the value, whichever receiver IsZero has.
		return func(p unsafe.Pointer) bool {
			return reflect.NewAt(t, p).Interface().(interface{ IsZero() bool }).IsZero()
		}
	}
	return func(p unsafe.Pointer) bool { return reflect.NewAt(t, p).Elem().IsZero() }
}

// marshalerEncoder calls the type's MarshalJSON, through a pointer to the
// value (its method set has both receivers' methods), and writes its output
// compacted, HTML-escaped, sorted and indented, as encoding/json then
// MarshalIndent would.
func marshalerEncoder(t reflect.Type) func(*typedJSON, []byte, unsafe.Pointer) ([]byte, error) {
	return func(e *typedJSON, b []byte, ptr unsafe.Pointer) ([]byte, error) {
		m := reflect.NewAt(t, ptr).Interface().(json.Marshaler)
		out, err := m.MarshalJSON()
		if err != nil {
			return b, &json.MarshalerError{Type: t, Err: err}
		}
		if plainScalar(out) {
			return append(b, out...), nil
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, out); err != nil {
			return b, &json.MarshalerError{Type: t, Err: err}
		}
		var escaped bytes.Buffer
		json.HTMLEscape(&escaped, compact.Bytes())
		return e.appendEncoded(b, escaped.Bytes()), nil
	}
}

// plainScalar is a string without escapes, an integer or a literal that
// kubectl prints as it is: JSON that needs no compacting, escaping nor
// reading again, the usual output of a Marshaler (a time, a quantity, an
// int-or-string).
func plainScalar(b []byte) bool {
	switch s := string(b); {
	case s == "true", s == "false", s == "null":
		return true
	case len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"':
		for _, c := range b[1 : len(b)-1] {
			if c >= utf8.RuneSelf || !htmlSafe[c] {
				return false
			}
		}
		return true
	}
	return len(b) > 0 && plainInt(b)
}

// fallbackEncoder has encoding/json encode the value, through a pointer
// when it is addressable, as it would be inside the whole object.
func fallbackEncoder(t reflect.Type, addressable bool) func(*typedJSON, []byte, unsafe.Pointer) ([]byte, error) {
	return func(e *typedJSON, b []byte, ptr unsafe.Pointer) ([]byte, error) {
		v := reflect.NewAt(t, ptr)
		var compact []byte
		var err error
		if addressable {
			compact, err = json.Marshal(v.Interface())
		} else {
			compact, err = json.Marshal(v.Elem().Interface())
		}
		if err != nil {
			return b, err
		}
		return e.appendEncoded(b, compact), nil
	}
}

// appendEncoded writes compact JSON encoding/json produced at the current
// depth, sorted and indented. What kubectl would not print as it is (raw
// JSON a Marshaler wrote, invalid UTF-8) is first read and written again as
// kubectl get does with what it prints in a list: twice, from the server's
// response, then from the List it makes of the objects.
func (e *typedJSON) appendEncoded(b, compact []byte) []byte {
	var notKubectls bool
	e.sorted, notKubectls = e.sorter.appendSorted(e.sorted[:0], compact)
	for range 2 {
		if !notKubectls {
			break
		}
		compact = asKubectlReadsIt(compact)
		e.sorted, notKubectls = e.sorter.appendSorted(e.sorted[:0], compact)
	}
	n := e.margin + 4*e.depth
	prefix := strings.Repeat(" ", n)
	if n <= len(spaces) {
		prefix = spaces[:n]
	}
	return appendIndent(b, e.sorted, prefix, "    ")
}

// asKubectlReadsIt is compact JSON read into Go values as kubectl reads
// JSON (k8s.io/apimachinery/pkg/util/json: integers that fit as int64, other
// numbers as float64, one member of a repeated name) and written again with
// encoding/json, as kubectl prints it: invalid UTF-8, which encoding/json
// writes as \ufffd, then comes out as the replacement character itself.
func asKubectlReadsIt(compact []byte) []byte {
	var v any
	if utiljson.Unmarshal(compact, &v) != nil {
		return compact
	}
	out, err := json.Marshal(v)
	if err != nil {
		return compact
	}
	return out
}

// appendJSONString appends s quoted as kubectl's encoding/json quotes
// strings, with HTML escaping.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if htmlSafe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			// encoding/json writes \ufffd; kubectl reads that back and
			// writes the character itself.
			dst = append(dst, s[start:i]...)
			dst = utf8.AppendRune(dst, utf8.RuneError)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// htmlSafe holds the ASCII bytes encoding/json writes as they are when it
// escapes HTML: printable, and none of `"`, `\`, `<`, `>`, `&`.
var htmlSafe = func() (set [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		set[b] = !strings.ContainsRune("\"\\<>&", rune(b))
	}
	return set
}()
