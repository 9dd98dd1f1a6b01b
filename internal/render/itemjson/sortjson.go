package itemjson

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// appendSortedKeys appends src, compact JSON as encoding/json writes it, to
// dst with the members of every object in key order: the JSON kubectl prints
// of an object it holds as unstructured, where encoding/json sorts map keys.
// Sorting the bytes of a typed object's encoding gives the same document as
// converting it to unstructured first, at a fraction of the cost.
func appendSortedKeys(dst, src []byte) []byte {
	var s keySorter
	dst, _ = s.appendSorted(dst, src)
	return dst
}

// appendSorted is appendSortedKeys reusing s's buffers. It also tells
// whether kubectl would print src otherwise than sorted (see notKubectls).
func (s *keySorter) appendSorted(dst, src []byte) (out []byte, notKubectls bool) {
	s.notKubectls = false
	dst, _ = s.value(dst, src, 0)
	return dst, s.notKubectls
}

// keySorter reads the document once: each object's members are written in
// their order with their values already sorted, then reordered by key in
// place, through one scratch buffer shared by every object.
type keySorter struct {
	scratch []byte
	members []member // a stack: each object's members above those of its parents
	// notKubectls is set when a scalar is not written as kubectl writes it
	// or an object repeats a key: kubectl reads what it prints into Go
	// values, which keep one member of a name and forget how a string's
	// escapes or a number were written. encoding/json writes neither of
	// these; a Marshaler's raw JSON (a raw extension, a CRD's default)
	// may hold both.
	notKubectls bool
}

// member is where one key:value member was written in dst.
type member struct{ from, keyEnd, to int }

// value appends the value starting at src[i] and returns where it ends.
func (s *keySorter) value(dst, src []byte, i int) ([]byte, int) {
	switch src[i] {
	case '{':
		return s.object(dst, src, i)
	case '[':
		dst = append(dst, '[')
		i++
		for src[i] != ']' {
			if src[i] == ',' {
				dst = append(dst, ',')
				i++
			}
			dst, i = s.value(dst, src, i)
		}
		return append(dst, ']'), i + 1
	}
	end := skipScalar(src, i)
	if !s.notKubectls && !kubectlsScalar(src[i:end]) {
		s.notKubectls = true
	}
	return append(dst, src[i:end]...), end
}

func (s *keySorter) object(dst, src []byte, i int) ([]byte, int) {
	base := len(s.members)
	dst = append(dst, '{')
	start := len(dst)
	i++ // {
	for src[i] != '}' {
		if src[i] == ',' {
			i++
		}
		if len(s.members) > base {
			dst = append(dst, ',')
		}
		keyEnd := skipScalar(src, i)
		if !s.notKubectls && !kubectlsScalar(src[i:keyEnd]) {
			s.notKubectls = true
		}
		m := member{from: len(dst)}
		dst = append(dst, src[i:keyEnd]...)
		m.keyEnd = len(dst)
		dst = append(dst, ':')
		dst, i = s.value(dst, src, keyEnd+1)
		m.to = len(dst)
		s.members = append(s.members, m)
	}
	dst = s.reorder(dst, start, s.members[base:])
	s.members = s.members[:base]
	return append(dst, '}'), i + 1
}

// reorder rewrites the members written from start on in key order.
func (s *keySorter) reorder(dst []byte, start int, members []member) []byte {
	key := func(m member) []byte { return dst[m.from:m.keyEnd] }
	sorted := true
	for n := 1; n < len(members); n++ {
		switch c := compareKeys(key(members[n-1]), key(members[n])); {
		case c == 0:
			s.notKubectls = true
		case c > 0:
			sorted = false
		}
	}
	if sorted {
		return dst
	}
	s.scratch = append(s.scratch[:0], dst[start:]...)
	at := func(m member) []byte { return s.scratch[m.from-start : m.to-start] }
	keyAt := func(m member) []byte { return s.scratch[m.from-start : m.keyEnd-start] }
	slices.SortStableFunc(members, func(a, b member) int { return compareKeys(keyAt(a), keyAt(b)) })
	dst = dst[:start]
	for n, m := range members {
		if n > 0 {
			dst = append(dst, ',')
			if bytes.Equal(keyAt(members[n-1]), keyAt(m)) {
				s.notKubectls = true
			}
		}
		dst = append(dst, at(m)...)
	}
	return dst
}

// compareKeys orders two quoted keys as encoding/json orders map keys: by
// their decoded strings. Keys without escapes compare as they are.
func compareKeys(a, b []byte) int {
	if bytes.IndexByte(a, '\\') < 0 && bytes.IndexByte(b, '\\') < 0 {
		return bytes.Compare(a[1:len(a)-1], b[1:len(b)-1])
	}
	var sa, sb string
	_ = json.Unmarshal(a, &sa)
	_ = json.Unmarshal(b, &sb)
	switch {
	case sa < sb:
		return -1
	case sa > sb:
		return 1
	}
	return 0
}

// skipScalar returns where the string, number or literal at src[i] ends.
func skipScalar(src []byte, i int) int {
	if src[i] == '"' {
		for i++; ; i++ {
			switch src[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
	}
	for i < len(src) && src[i] != ',' && src[i] != '}' && src[i] != ']' {
		i++
	}
	return i
}

// kubectlsScalar tells whether kubectl prints the string, number or literal
// b as it is: a string with the escapes encoding/json writes and nothing
// else escaped or to escape, or a number as encoding/json writes the Go
// value kubectl reads it into.
func kubectlsScalar(b []byte) bool {
	if b[0] != '"' {
		if b[0] == '-' || '0' <= b[0] && b[0] <= '9' {
			return plainInt(b) || bytes.Equal(kubectlsNumber(b), b)
		}
		return true // true, false, null
	}
	for i := 1; i < len(b)-1; {
		c := b[i]
		switch {
		case c == '\\':
			if !encodingJSONEscape(b[i+1:]) {
				return false
			}
			if b[i+1] == 'u' {
				i += 6
			} else {
				i += 2
			}
			continue
		case c < utf8.RuneSelf:
			if !htmlSafe[c] {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			return false
		}
		i += size
	}
	return true
}

// encodingJSONEscape tells whether the escape after a backslash is one
// encoding/json writes (with HTML escaping) of a valid string; \ufffd is
// what it writes of invalid UTF-8, which kubectl reads as the replacement
// character and writes as it is.
func encodingJSONEscape(esc []byte) bool {
	switch esc[0] {
	case '"', '\\', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
	default:
		return false
	}
	switch hex := string(esc[1:5]); hex {
	case "003c", "003e", "0026", "2028", "2029":
		return true
	default:
		// Control characters without a short escape.
		return hex[:3] == "000" && hex[3] != '8' && hex[3] != '9' && hex[3] != 'a' && hex[3] != 'c' && hex[3] != 'd' && isLowerHex(hex[3]) ||
			hex[:3] == "001" && isLowerHex(hex[3])
	}
}

func isLowerHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

// plainInt is an integer kubectl surely prints as written: no sign but a
// minus, no leading zero, not "-0", and too short to overflow an int64.
func plainInt(b []byte) bool {
	digits := b
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 || digits[0] == '0' && (len(digits) > 1 || len(b) > 1) {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// kubectlsNumber is the number literal b as kubectl get prints it in a
// list. kubectl reads JSON with k8s.io/apimachinery/pkg/util/json, which
// makes a number with no '.' that fits an int64 an int64 and any other a
// float64, and writes it with encoding/json; it does so twice, once reading
// the server's response and once the List it makes of the objects, so -0.0
// comes out as 0. A literal no float64 holds is left as it is (kubectl
// fails to read it).
func kubectlsNumber(b []byte) []byte {
	for range 2 {
		var v any
		if err := utiljson.Unmarshal(b, &v); err != nil {
			return b
		}
		out, err := json.Marshal(v)
		if err != nil {
			return b
		}
		b = out
	}
	return b
}
