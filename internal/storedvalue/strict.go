package storedvalue

import (
	"strconv"
	"strings"

	apiruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/regctl/regctl/internal/handle"
)

// StrictDecoder is the strict decoder of mediaType of h's path, the one
// the create and update handlers refuse unknown fields with (for a custom
// resource, the CRD handler's, which tracks the fields its structural
// schema prunes); nil when it has none.
func StrictDecoder(h *handle.Handle, mediaType string) apiruntime.Decoder {
	if h == nil || h.Codec.Serializer == nil {
		return nil
	}
	for _, info := range h.Codec.Serializer.SupportedMediaTypes() {
		if info.MediaType == mediaType && info.StrictSerializer != nil {
			return h.Codec.Serializer.DecoderToVersion(info.StrictSerializer, h.Codec.Hub)
		}
	}
	return nil
}

// StrictFields are the fields a strict decoding error objects to, the
// first limit of them; nil for any other error.
func StrictFields(err error, limit int) []Field {
	strictErr, ok := apiruntime.AsStrictDecodingError(err)
	if !ok {
		return nil
	}
	var out []Field
	for _, e := range strictErr.Errors() {
		if len(out) == limit {
			break
		}
		out = append(out, Field{Path: strictPath(e.Error())})
	}
	return out
}

// strictPath is the path in a strict decoder's `unknown field "spec.x"`,
// or its whole message when it says something else (a duplicate field).
func strictPath(msg string) string {
	if quoted, ok := strings.CutPrefix(msg, "unknown field "); ok {
		if path, err := strconv.Unquote(quoted); err == nil {
			return path
		}
	}
	return msg
}
