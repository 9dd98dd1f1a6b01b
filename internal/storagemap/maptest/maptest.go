// Package maptest opens the storage map of a default kube-apiserver on an
// embedded etcd of its own, for the tests of the packages that take the
// map's handles: a real store on a real etcd, never a mock.
package maptest

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
	"github.com/regctl/regctl/internal/storedvalue"
)

// Open opens a session on a default server's map, built on an ephemeral
// embedded etcd, and returns it with that etcd's client. Both are closed
// when the test ends.
func Open(t testing.TB) (*storagemap.Session, *clientv3.Client) {
	t.Helper()
	ctx := context.Background()
	s, err := storagemap.Open(ctx, storagemap.Config{Options: serverflags.NewOptions(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c, err := s.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// ConfigMaps is the server's config map store in namespace on such a map,
// and a function that creates a config map in it through that store.
func ConfigMaps(t testing.TB, namespace string) (handle.Target, func(name string)) {
	t.Helper()
	s, _ := Open(t)
	h := s.Map.Handles["configmaps"]
	create := func(name string) {
		t.Helper()
		// What a request carries to the store: its declarative
		// validation reads the request info (stores.RequestContext, which
		// this package cannot import).
		ctx := genericapirequest.WithRequestInfo(genericapirequest.WithNamespace(genericapirequest.NewContext(), namespace),
			&genericapirequest.RequestInfo{IsResourceRequest: true, Verb: "create", APIVersion: "v1", Resource: "configmaps", Namespace: namespace})
		cm := &api.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
		if _, err := h.Storage.(rest.Creater).Create(ctx, cm, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return handle.Target{Handle: h, Namespace: namespace}, create
}

// protobufMagic starts every value the apiserver's protobuf serializer
// writes.
var protobufMagic = []byte("k8s\x00")

// WithUnknownField adds field number to the object inside a stored
// protobuf value, as a server whose type had that field would have
// written it.
func WithUnknownField(t testing.TB, stored []byte, number protowire.Number) []byte {
	t.Helper()
	var u runtime.Unknown
	if err := u.Unmarshal(bytes.TrimPrefix(stored, protobufMagic)); err != nil {
		t.Fatal(err)
	}
	u.Raw = protowire.AppendString(protowire.AppendTag(u.Raw, number, protowire.BytesType), "from a newer server")
	data, err := u.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return append(slices.Clone(protobufMagic), data...)
}

// EncodeAt encodes obj, an object of a versioned API type, as the
// apiserver's protobuf serializer stores it at that version: what a
// server whose storage version it is writes.
func EncodeAt(t testing.TB, obj runtime.Object, gv schema.GroupVersion) []byte {
	t.Helper()
	s := protobuf.NewSerializer(legacyscheme.Scheme, legacyscheme.Scheme)
	data, err := runtime.Encode(legacyscheme.Codecs.EncoderForVersion(s, gv), obj)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// NewerStored finds a built-in resource this release stores at a version
// older than another it knows for the same kind (in 1.36, for example,
// MutatingAdmissionPolicies: stored at v1beta1, served at v1 too), and
// returns its handle and an object of its kind at that newer version.
func NewerStored(t *testing.T, handles map[string]*handle.Handle) (*handle.Handle, runtime.Object, schema.GroupVersion) {
	t.Helper()
	for _, path := range slices.Sorted(maps.Keys(handles)) {
		h := handles[path]
		if h.OwnStore() == nil || storedvalue.CustomResource(h) {
			continue
		}
		for _, gv := range legacyscheme.Scheme.PrioritizedVersionsForGroup(h.Resource.Group) {
			gvk := gv.WithKind(h.Route.Kind)
			if !storedvalue.Newer(gv.String(), h.Route.StorageVersion) || !legacyscheme.Scheme.Recognizes(gvk) {
				continue
			}
			obj, err := legacyscheme.Scheme.New(gvk)
			if err != nil {
				t.Fatal(err)
			}
			return h, obj, gv
		}
	}
	t.Fatal("this release stores every built-in resource at the newest version it knows")
	return nil, nil, schema.GroupVersion{}
}
