package itemjson

import "bytes"

// appendIndent appends src, compact JSON as json.Marshal writes it, to dst,
// indented exactly as json.MarshalIndent(v, prefix, indent) would indent it.
// encoding/json indents by running its scanner over every byte again, which
// costs more than the encoding; this copies whole strings at a time and only
// looks at structure between them.
func appendIndent(dst, src []byte, prefix, indent string) []byte {
	depth := 0
	newline := func() {
		dst = append(dst, '\n')
		dst = append(dst, prefix...)
		for i := 0; i < depth; i++ {
			dst = append(dst, indent...)
		}
	}
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '"':
			end := stringEnd(src, i+1)
			dst = append(dst, src[i:end]...)
			i = end - 1
		case '{', '[':
			dst = append(dst, c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				dst = append(dst, src[i+1])
				i++
				continue
			}
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, ':', ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// stringEnd is the index just past the closing quote of the JSON string
// whose body starts at i.
func stringEnd(src []byte, i int) int {
	for {
		j := bytes.IndexAny(src[i:], `"\`)
		if j < 0 {
			return len(src)
		}
		i += j
		if src[i] == '\\' {
			i += 2
			continue
		}
		return i + 1
	}
}
