package etcdview

import (
	"bytes"
	"strings"

	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/runtime/serializer/recognizer"
	"k8s.io/apiserver/pkg/storage/value/encrypt/envelope/kmsv2"
	kmstypes "k8s.io/apiserver/pkg/storage/value/encrypt/envelope/kmsv2/v2"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"sigs.k8s.io/yaml"
)

// storedCodecs are the apiserver's serializers for what etcd may hold: its
// own, and CBOR, which custom resources are stored as when the
// CBORServingAndStorage gate is on (and which the server always reads).
var storedCodecs = serializer.NewCodecFactory(legacyscheme.Scheme, serializer.WithSerializer(cbor.NewSerializerInfo))

// MediaType names the encoding of a stored value by asking each of the
// apiserver's serializers whether it recognizes the bytes (protobuf by its
// "k8s\x00" magic, CBOR by its self-describing tag, JSON by shape). YAML has
// no marker, so it is the answer only when the bytes parse as a YAML object
// with a kind. Encrypted values are opaque: check ParseEnvelope first.
func MediaType(data []byte) string {
	for _, info := range storedCodecs.SupportedMediaTypes() {
		rd, ok := info.Serializer.(recognizer.RecognizingDecoder)
		if !ok {
			continue
		}
		if recognized, unknown, err := rd.RecognizesData(data); err == nil && recognized && !unknown {
			return info.MediaType
		}
	}
	var meta runtime.TypeMeta
	if err := yaml.Unmarshal(data, &meta); err == nil && meta.Kind != "" {
		return runtime.ContentTypeYAML
	}
	return UnknownMediaType
}

// UnknownMediaType is what MediaType says of bytes of no encoding a server
// writes.
const UnknownMediaType = "unknown"

// envelopePrefix starts every value written by an encrypting transformer:
// k8s:enc:<provider>:<version>:<key name>:<ciphertext>.
const envelopePrefix = "k8s:enc:"

// Envelope is the plain-text header of an encrypted value.
type Envelope struct {
	Provider string // aescbc, aesgcm, secretbox, kms
	Version  string // v1, v2
	Key      string // the key or KMS plugin name from the encryption config
	// KeyID is the KMS v2 plugin's key ID the value's DEK was encrypted
	// with, stored in clear after the header; empty for other providers.
	KeyID string
}

func (e Envelope) String() string {
	return e.Provider + ":" + e.Version + ":" + e.Key
}

// Prefix is the plain-text header a value encrypted so starts with.
func (e Envelope) Prefix() string {
	return envelopePrefix + e.String() + ":"
}

// ParseEnvelope reads the envelope of an encrypted value; ok is false when
// the value is not encrypted.
func ParseEnvelope(data []byte) (Envelope, bool) {
	if !bytes.HasPrefix(data, []byte(envelopePrefix)) {
		return Envelope{}, false
	}
	parts := strings.SplitN(string(data[len(envelopePrefix):min(len(data), 512)]), ":", 4)
	if len(parts) < 4 {
		return Envelope{}, false
	}
	env := Envelope{Provider: parts[0], Version: parts[1], Key: parts[2]}
	if env.Provider == "kms" && env.Version == "v2" {
		body := data[len(envelopePrefix)+len(parts[0])+len(parts[1])+len(parts[2])+3:]
		env.KeyID = kmsv2KeyID(body)
	}
	return env, true
}

// kmsv2KeyID reads the key ID of a KMS v2 value's EncryptedObject, the
// server's own type, without decrypting anything; empty when the object is
// not one the server would read.
func kmsv2KeyID(body []byte) string {
	o := &kmstypes.EncryptedObject{}
	if err := proto.Unmarshal(body, o); err != nil {
		return ""
	}
	if err := kmsv2.ValidateEncryptedObject(o); err != nil {
		return ""
	}
	return o.KeyID
}
