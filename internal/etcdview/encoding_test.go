package etcdview

import (
	"testing"

	"google.golang.org/protobuf/proto"
	kmstypes "k8s.io/apiserver/pkg/storage/value/encrypt/envelope/kmsv2/v2"
)

func TestParseEnvelope(t *testing.T) {
	// The EncryptedObject a KMS v2 provider stores after its header; its
	// encrypted data holds a ':' so that the header split is tested too.
	object, err := proto.Marshal(&kmstypes.EncryptedObject{
		EncryptedData:      []byte("cipher:text"),
		KeyID:              "key-1",
		EncryptedDEKSource: []byte("wrapped dek"),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		value []byte
		want  Envelope
		ok    bool
	}{
		{"plain protobuf", []byte("k8s\x00\n\x0c\n\x02v1"), Envelope{}, false},
		{"aescbc", []byte("k8s:enc:aescbc:v1:key1:\x01\x02\x03"), Envelope{Provider: "aescbc", Version: "v1", Key: "key1"}, true},
		{"kms v2", append([]byte("k8s:enc:kms:v2:testkms:"), object...), Envelope{Provider: "kms", Version: "v2", Key: "testkms", KeyID: "key-1"}, true},
		// A body the server would refuse to read names no key ID.
		{"kms v2 not an EncryptedObject", []byte("k8s:enc:kms:v2:testkms:\xff\xff"), Envelope{Provider: "kms", Version: "v2", Key: "testkms"}, true},
	} {
		got, ok := ParseEnvelope(tc.value)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: got %+v, %v; want %+v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
		if ok && got.String() != tc.want.Provider+":"+tc.want.Version+":"+tc.want.Key {
			t.Errorf("%s: String() = %q", tc.name, got.String())
		}
	}
}

func TestValueInfoFieldsKMSKeyID(t *testing.T) {
	has := func(info *ValueInfo, field string) bool {
		for _, f := range info.Fields() {
			if f[0] == field {
				return true
			}
		}
		return false
	}
	kms := &ValueInfo{Encryption: "kms:v2:testkms", KMSKeyID: "key-1"}
	if f := kms.Fields(); !has(kms, "KMS key ID") || f[7] != [2]string{"KMS key ID", "key-1"} {
		t.Errorf("kms v2 value: %q", f)
	}
	if aes := (&ValueInfo{Encryption: "aescbc:v1:key1"}); has(aes, "KMS key ID") {
		t.Errorf("aescbc value: %q", aes.Fields())
	}
}
