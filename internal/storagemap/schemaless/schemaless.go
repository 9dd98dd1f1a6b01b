// Package schemaless reads a CRD without its OpenAPI schemas: nearly all of
// a CRD's bytes, which only serving its custom resources needs. A map of a
// cluster with hundreds of CRDs reads them all; through this codec it
// decodes a fraction of what they weigh.
package schemaless

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Codec is a CRD store's codec that decodes a CRD with its schemas left out
// (Strip), and then as the codec does.
type Codec struct{ runtime.Codec }

func (s Codec) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if stripped, ok := Strip(data); ok {
		data = stripped
	}
	return s.Codec.Decode(data, defaults, into)
}

// Strip is the JSON of a CRD, as the apiextensions server stores
// it (v1beta1, or v1), with null for the OpenAPI schemas of its versions
// (spec.validation, spec.versions[*].schema) and every other byte as it
// is, for the server's codec to decode. ok is false when data is not a
// JSON object whose schemas it finds, which the codec then decodes, or
// refuses, as it is. It walks the JSON once, looking into spec and its
// versions only, and builds nothing of what it passes.
func Strip(data []byte) (out []byte, ok bool) {
	var cuts [][2]int
	version := func(key []byte, at int) (int, error) {
		end, err := skipValue(data, at)
		if string(key) == "schema" {
			cuts = append(cuts, [2]int{at, end})
		}
		return end, err
	}
	spec := func(key []byte, at int) (int, error) {
		switch string(key) {
		case "versions":
			return eachElement(data, at, func(at int) (int, error) { return eachMember(data, at, version) })
		case "validation":
			end, err := skipValue(data, at)
			cuts = append(cuts, [2]int{at, end})
			return end, err
		}
		return skipValue(data, at)
	}
	_, err := eachMember(data, skipSpace(data, 0), func(key []byte, at int) (int, error) {
		if string(key) == "spec" {
			return eachMember(data, at, spec)
		}
		return skipValue(data, at)
	})
	if err != nil || len(cuts) == 0 {
		return nil, false
	}
	out = make([]byte, 0, 16<<10)
	last := 0
	for _, c := range cuts {
		out = append(append(out, data[last:c[0]]...), "null"...)
		last = c[1]
	}
	return append(out, data[last:]...), true
}

var errNotJSON = errors.New("not the JSON Strip reads")

// eachMember calls member with the key and value offset of each member of
// the object at data[at], which returns where the value ends; it returns
// where the object ends.
func eachMember(data []byte, at int, member func(key []byte, at int) (int, error)) (int, error) {
	if at >= len(data) || data[at] != '{' {
		return 0, errNotJSON
	}
	i := skipSpace(data, at+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, nil
	}
	for {
		end, err := skipString(data, i)
		if err != nil {
			return 0, err
		}
		key := data[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			// A key written with escapes is read as a decode reads it.
			var unquoted string
			if json.Unmarshal(data[i:end], &unquoted) != nil {
				return 0, errNotJSON
			}
			key = []byte(unquoted)
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return 0, errNotJSON
		}
		if i, err = member(key, skipSpace(data, i+1)); err != nil {
			return 0, err
		}
		if i = skipSpace(data, i); i >= len(data) {
			return 0, errNotJSON
		}
		switch data[i] {
		case '}':
			return i + 1, nil
		case ',':
			i = skipSpace(data, i+1)
		default:
			return 0, errNotJSON
		}
	}
}

// eachElement is eachMember for the elements of the array at data[at].
func eachElement(data []byte, at int, element func(at int) (int, error)) (int, error) {
	if at >= len(data) || data[at] != '[' {
		return 0, errNotJSON
	}
	i := skipSpace(data, at+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, nil
	}
	for {
		var err error
		if i, err = element(i); err != nil {
			return 0, err
		}
		if i = skipSpace(data, i); i >= len(data) {
			return 0, errNotJSON
		}
		switch data[i] {
		case ']':
			return i + 1, nil
		case ',':
			i = skipSpace(data, i+1)
		default:
			return 0, errNotJSON
		}
	}
}

// skipValue is where the JSON value at data[at] ends. It checks only what
// finding the end takes: the codec decodes, and checks, what is kept.
func skipValue(data []byte, at int) (int, error) {
	if at >= len(data) {
		return 0, errNotJSON
	}
	switch data[at] {
	case '"':
		return skipString(data, at)
	case '{', '[':
		depth := 0
		for i := at; i < len(data); i++ {
			switch data[i] {
			case '"':
				end, err := skipString(data, i)
				if err != nil {
					return 0, err
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1, nil
				}
			}
		}
		return 0, errNotJSON
	}
	// A number, true, false or null.
	i := at
	for i < len(data) && !strings.ContainsRune(",}] \t\r\n", rune(data[i])) {
		i++
	}
	if i == at {
		return 0, errNotJSON
	}
	return i, nil
}

// skipString is where the string at data[at] ends, past its closing quote.
func skipString(data []byte, at int) (int, error) {
	if at >= len(data) || data[at] != '"' {
		return 0, errNotJSON
	}
	// Schemas are mostly long descriptions: find each quote at memchr's
	// speed, and tell an escaped one by the backslashes before it.
	for i := at + 1; ; {
		j := bytes.IndexByte(data[i:], '"')
		if j < 0 {
			return 0, errNotJSON
		}
		quote := i + j
		backslashes := 0
		for k := quote - 1; k > at && data[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return quote + 1, nil
		}
		i = quote + 1
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}
