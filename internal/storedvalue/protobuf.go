package storedvalue

import (
	"bytes"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	apiextensionsscheme "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/scheme"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	aggregatorscheme "k8s.io/kube-aggregator/pkg/apiserver/scheme"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
)

// The Kubernetes API types are generated with their protobuf field numbers
// in struct tags (`protobuf:"bytes,2,opt,name=spec"`). A stored value whose
// bytes hold a field number its type does not declare was written by a
// server whose schema had that field: the generated decoder skips it
// without a word, and the next write of the object drops it. Walking the
// value against the type's own tags finds those fields exactly, without
// decoding anything twice.

// message is what a generated type declares: its fields by number.
type message struct {
	// fields is indexed by number: the generated types number their
	// fields from 1 with few gaps, and a value's every field is looked
	// up here.
	fields []messageField
	// last is the highest number the type declares: a field past it was
	// added after this release, one below it removed (or added by
	// another release in a gap).
	last protowire.Number
}

type messageField struct {
	// name is empty for a number the type does not declare.
	name string
	// msg is the field's message type (an element's, for a repeated
	// field); nil for scalars and for types with their own encoding
	// (Time, Quantity), which declare no tagged fields.
	msg *message
	// mapValue is the message type of a map's values, when they are
	// messages.
	mapValue *message
	isMap    bool
}

var (
	messagesMu sync.Mutex
	messages   = map[reflect.Type]*message{}
)

// messageOf is the declared fields of t, a generated API struct; nil when
// it declares none (an opaque type with its own marshalling).
func messageOf(t reflect.Type) *message {
	messagesMu.Lock()
	defer messagesMu.Unlock()
	return messageOfLocked(t)
}

func messageOfLocked(t reflect.Type) *message {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	if m, ok := messages[t]; ok {
		return m
	}
	m := &message{}
	// Recorded before its fields, for types that hold themselves
	// (JSONSchemaProps).
	messages[t] = m
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		num, name, ok := protobufTag(f.Tag.Get("protobuf"))
		if !ok || num > maxFieldNumber {
			continue
		}
		if name == "" {
			name = "#" + strconv.Itoa(int(num))
		}
		field := messageField{name: name}
		ft := f.Type
		switch {
		case ft.Kind() == reflect.Map:
			// The generated types tag a map as a repeated field; its
			// entries are messages of a key (1) and a value (2), a
			// message when the value's type is one.
			field.isMap = true
			field.mapValue = elemMessage(ft.Elem())
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() != reflect.Uint8:
			field.msg = elemMessage(ft.Elem())
		default:
			field.msg = elemMessage(ft)
		}
		if int(num) >= len(m.fields) {
			m.fields = append(m.fields, make([]messageField, int(num)+1-len(m.fields))...)
		}
		m.fields[num] = field
		m.last = max(m.last, num)
	}
	if m.last == 0 {
		messages[t] = nil
		return nil
	}
	return m
}

func elemMessage(t reflect.Type) *message {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	return messageOfLocked(t)
}

// protobufTag reads the field number and name of a protobuf struct tag.
func protobufTag(tag string) (protowire.Number, string, bool) {
	if tag == "" {
		return 0, "", false
	}
	parts := strings.Split(tag, ",")
	if len(parts) < 2 {
		return 0, "", false
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil {
		return 0, "", false
	}
	name := ""
	for _, p := range parts[2:] {
		if v, ok := strings.CutPrefix(p, "name="); ok {
			name = v
		}
	}
	return protowire.Number(n), name, true
}

var errMalformed = errors.New("malformed protobuf")

// Field is a field of a stored value that this release's type does not
// declare.
type Field struct {
	// Path names it by the declared fields it is under, and its own
	// number where no name is known ("spec.containers.#42"); for a JSON
	// or CBOR value, the path the strict decoder names.
	Path string `json:"path"`
	// Number is a protobuf field's number, 0 for JSON and CBOR.
	Number int `json:"number,omitempty"`
	// Newer is set for a protobuf field numbered past the last its
	// message declares: a newer kube-apiserver added it. Below that
	// number, this release removed the field, or another release added
	// it in a gap.
	Newer bool `json:"newer,omitempty"`
}

func (f Field) String() string { return f.Path }

// maxFieldNumber bounds the numbers a type's fields are looked up by: the
// generated types' are below a hundred.
const maxFieldNumber = 1 << 12

// field is the field m declares as num; nil when it declares none.
func (m *message) field(num protowire.Number) *messageField {
	if num < 1 || int(num) >= len(m.fields) || m.fields[num].name == "" {
		return nil
	}
	return &m.fields[num]
}

// unknownFields lists the fields of raw, an encoded m, that m does not
// declare, at most limit of them.
func unknownFields(raw []byte, m *message, limit int) ([]Field, error) {
	w := walker{limit: limit}
	err := w.walk(raw, m)
	return w.found, err
}

// walker walks a value against its type. The path of fields it is at is
// joined only for a field it reports: most values have none. A scan walks
// every protobuf value it reads, so the walk is a plain loop: no closure
// and no string for a value with no unknown field, only the path's few
// pointers.
type walker struct {
	path  []*messageField
	found []Field
	limit int
}

func (w *walker) walk(b []byte, m *message) error {
	for len(b) > 0 {
		num, value, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		f := m.field(num)
		if f == nil {
			w.report(num, m)
			continue
		}
		if value == nil || f.msg == nil && f.mapValue == nil {
			continue
		}
		w.path = append(w.path, f)
		if f.isMap {
			err = w.walkEntry(value, f.mapValue)
		} else {
			err = w.walk(value, f.msg)
		}
		w.path = w.path[:len(w.path)-1]
		if err != nil {
			return err
		}
	}
	return nil
}

// walkEntry walks a map entry: a message of its key (1) and its value (2),
// a message of type value.
func (w *walker) walkEntry(b []byte, value *message) error {
	for len(b) > 0 {
		num, v, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		if num == 2 && v != nil {
			if err := w.walk(v, value); err != nil {
				return err
			}
		}
	}
	return nil
}

// report records num, a field m does not declare, at the walker's path.
func (w *walker) report(num protowire.Number, m *message) {
	if len(w.found) >= w.limit {
		return
	}
	names := make([]string, 0, len(w.path)+1)
	for _, f := range w.path {
		if f.isMap {
			names = append(names, f.name+"[]")
		} else {
			names = append(names, f.name)
		}
	}
	names = append(names, "#"+strconv.Itoa(int(num)))
	w.found = append(w.found, Field{Path: strings.Join(names, "."), Number: int(num), Newer: num > m.last})
}

// noBytes is an empty length-delimited field's value, told from nil.
var noBytes = make([]byte, 0)

// eachField calls fn with every field of an encoded message, and the bytes
// of those that are length-delimited (nil for the others).
func eachField(b []byte, fn func(num protowire.Number, value []byte) error) error {
	for len(b) > 0 {
		num, value, rest, err := nextField(b)
		if err != nil {
			return err
		}
		b = rest
		if err := fn(num, value); err != nil {
			return err
		}
	}
	return nil
}

// nextField reads the first field of b: its number, its bytes when it is
// length-delimited (nil for the others), and what follows it.
func nextField(b []byte) (num protowire.Number, value, rest []byte, err error) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return 0, nil, nil, errMalformed
	}
	b = b[n:]
	if typ == protowire.BytesType {
		value, n = protowire.ConsumeBytes(b)
		if value == nil && n >= 0 {
			value = noBytes
		}
	} else {
		n = protowire.ConsumeFieldValue(num, typ, b)
	}
	if n < 0 {
		return 0, nil, nil, errMalformed
	}
	return num, value, b[n:], nil
}

// protobufMagic starts every value the apiserver's protobuf serializer
// writes, before the runtime.Unknown that wraps the object.
var protobufMagic = []byte("k8s\x00")

// unwrapProtobuf reads the runtime.Unknown of a stored protobuf value
// (TypeMeta 1 {apiVersion 1, kind 2}, raw 2) without copying the object's
// bytes.
func unwrapProtobuf(data []byte) (apiVersion, kind string, raw []byte, err error) {
	if !bytes.HasPrefix(data, protobufMagic) {
		return "", "", nil, errMalformed
	}
	err = eachField(data[len(protobufMagic):], func(num protowire.Number, value []byte) error {
		switch {
		case value == nil:
		case num == 1:
			return eachField(value, func(num protowire.Number, value []byte) error {
				switch {
				case value == nil:
				case num == 1:
					apiVersion = string(value)
				case num == 2:
					kind = string(value)
				}
				return nil
			})
		case num == 2:
			raw = value
		}
		return nil
	})
	return apiVersion, kind, raw, err
}

// typeSchemes name the Go type of every built-in stored kind, as the
// schemes of the servers of kube-apiserver's chain do. A stored value is of
// a versioned type, and the apiextensions group's versioned types are in
// its generated clientset's scheme, which regctl initialises anyway: the
// apiextensions server's own package would bring the whole generic server
// (admission, informers) into every package that reads a stored value.
var typeSchemes = []*apiruntime.Scheme{legacyscheme.Scheme, apiextensionsscheme.Scheme, aggregatorscheme.Scheme}

var kindMessages sync.Map // schema.GroupVersionKind → *message

// ProtobufFields reads the kind of a stored protobuf value (as the
// apiserver's protobuf serializer writes it) and the fields, at most limit
// of them, that its type in this release does not declare; none for a kind
// no scheme of this release holds.
func ProtobufFields(data []byte, limit int) (schema.GroupVersionKind, []Field, error) {
	apiVersion, kind, raw, err := unwrapProtobuf(data)
	if err != nil {
		return schema.GroupVersionKind{}, nil, err
	}
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
	m, ok := kindMessages.Load(gvk)
	if !ok {
		var msg *message
		for _, sc := range typeSchemes {
			if obj, err := sc.New(gvk); err == nil {
				msg = messageOf(reflect.TypeOf(obj))
				break
			}
		}
		m, _ = kindMessages.LoadOrStore(gvk, msg)
	}
	msg := m.(*message)
	if msg == nil {
		return gvk, nil, nil
	}
	fields, err := unknownFields(raw, msg, limit)
	return gvk, fields, err
}
