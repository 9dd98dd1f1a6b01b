// Package handle holds the handle of one path of the storage map: its route
// record, its storage and store, its codec, and what reaching its etcd
// takes. The map builds one per path; whatever reads, writes or scans a
// resource takes its handle and links nothing of the map's assembly.
package handle

import (
	"context"
	"fmt"
	gopath "path"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/value"

	"github.com/regctl/regctl/internal/routetable"
)

// Handle is one path of the map with everything needed to touch what it
// stores: its route record, its storage, the generic store it reaches etcd
// through, its key function under `--etcd-prefix`, its transformer and the
// etcd client of its own servers (its `--etcd-servers-overrides` entry, or
// `--etcd-servers`). The map builds one per path, once, as the apiserver's
// installer builds one handlers.RequestScope per resource; whatever reads or
// writes a resource takes its handle and never goes back to the map.
type Handle struct {
	// Path is the route's path: "pods", "pods/status", "deployments.apps",
	// "horizontalpodautoscalers.v1.autoscaling".
	Path string
	// Route is the path's record in the route table.
	Route routetable.Route
	// Resource is the server's discovery entry for the path. A subresource
	// carries its resource's scope.
	Resource metav1.APIResource
	// Storage is the path's storage as the server installs it; it is a
	// rest.Getter, rest.Lister, rest.Creater... as the path serves.
	Storage rest.Storage
	// Store is the generic registry store the path reaches etcd through (its
	// own, or the one it shares), nil for a path that never touches etcd.
	Store *genericregistry.Store
	// Codec decodes the path's manifests and converts its objects to the
	// served version.
	Codec Codec
	// Warnings are what the server warns of on every request to the path,
	// whatever its verb: its kind's, or its CRD version's, deprecation.
	Warnings []string

	// EtcdPrefix is `--etcd-prefix`, which the storage layer puts in front
	// of the store's keys.
	EtcdPrefix string
	// ValueTransformer is the store's transformer (encryption), nil when
	// values are stored as they are encoded.
	ValueTransformer value.Transformer

	// The callbacks the session fills in: the etcd client of the path's
	// servers, readying what its store allocates from (nil: nothing), and
	// its field manager, built on first use.
	Dial            func(context.Context) (*clientv3.Client, error)
	Allocators      func(context.Context) error
	NewFieldManager func() (*FieldManager, error)
	// Serve, when set, builds what serving the path takes and is not
	// built yet: a custom resource's storage, codecs and field managers,
	// which the CRD handler builds on the first request for its CRD. The
	// handle as the map lists it then carries the route and key functions
	// only: its storage codec knows no schema, so objects are read through
	// the handle Serving returns.
	Serve func() (*Handle, error)
}

// Serving is the handle with what reading and writing the path's objects
// takes: h itself, or a new handle when h defers it (Serve). Each call to
// a deferring handle builds anew: a caller keeps what it needs as long as
// it needs it, as scan keeps a CRD's storage while it walks that CRD's keys.
func (h *Handle) Serving() (*Handle, error) {
	if h.Serve == nil {
		return h, nil
	}
	return h.Serve()
}

// Target is one path of the map, resolved from what the user typed: its
// handle, and the namespace to work in.
type Target struct {
	*Handle
	// Namespace is where to look; empty for cluster-scoped resources and for
	// all namespaces.
	Namespace string
}

// FieldManager is the field manager the server's create and update
// handlers of a path run on what they write (the one the installer, or for
// a custom resource the CRD handler, puts in the path's
// handlers.RequestScope), with the creater and kind of the scope that the
// create handler takes an empty live object from. It records in
// metadata.managedFields which manager set which fields, and keeps the
// stored ones when an update carries none.
type FieldManager struct {
	*managedfields.FieldManager
	Creater runtime.ObjectCreater
	Kind    schema.GroupVersionKind
}

// Create is what the create handler does to an object before the store
// creates it: the manager's update of a new, empty object of the path's
// kind. As on the server, a failure clears managedFields and is no error.
func (f *FieldManager) Create(obj runtime.Object, manager string) (runtime.Object, error) {
	live, err := f.Creater.New(f.Kind)
	if err != nil {
		return nil, fmt.Errorf("creating a new %s: %w", f.Kind, err)
	}
	return f.UpdateNoErrors(live, obj, manager), nil
}

// FieldManager is the path's field manager, built on first use.
func (h *Handle) FieldManager() (*FieldManager, error) {
	if h.NewFieldManager == nil {
		return nil, fmt.Errorf("regctl bug: %s has no field manager", h.Path)
	}
	return h.NewFieldManager()
}

// ReadyAllocators readies what the path's store allocates from beyond its
// own etcd keys, for a write that allocates or releases: the services
// store's cluster IP allocator, which reads ServiceCIDR and IPAddress
// objects through informers that only this starts. Reads never call it.
// For other paths it does nothing.
func (h *Handle) ReadyAllocators(ctx context.Context) error {
	if h.Allocators == nil {
		return nil
	}
	return h.Allocators(ctx)
}

// GroupVersion is the external version the path's objects are served in:
// its kind's, which for a subresource may be another group's (pods/eviction
// takes policy/v1 Evictions).
func (h *Handle) GroupVersion() schema.GroupVersion {
	return schema.GroupVersion{Group: h.Resource.Group, Version: h.Resource.Version}
}

// Stored tells whether the path reaches etcd at all.
func (h *Handle) Stored() bool { return h.Store != nil }

// OwnStore is the generic store the path is, nil when it writes through
// another path's store (pods/status, bindings) or none.
func (h *Handle) OwnStore() *genericregistry.Store {
	if h.Route.Store != routetable.StoreOwn {
		return nil
	}
	return h.Store
}

// Client is the etcd client of the servers that hold the path's objects,
// dialed and checked on first use and shared by every path on those
// servers.
func (h *Handle) Client(ctx context.Context) (*clientv3.Client, error) {
	if h.Store == nil {
		return nil, h.notStored()
	}
	return h.Dial(ctx)
}

// Transformer is the storage transformer (encryption) of the path's store,
// nil when values are stored as they are encoded.
func (h *Handle) Transformer() value.Transformer { return h.ValueTransformer }

// StorageCodec is the codec the path's store decodes a value with once it
// is decrypted (and encodes one with before encrypting it): the one its
// storage was created with, which the store keeps beside it
// (genericregistry.Store.CompleteWithOptions). That is the
// RESTOptionsGetter's codec as the store's constructor passed it on: for a
// custom resource served by the CRD handler, the handler's own, which
// defaults, prunes and coerces what it reads by the CRD's schema and
// converts it to the version served. nil for a path that never touches
// etcd.
func (h *Handle) StorageCodec() runtime.Codec {
	if h.Store == nil {
		return nil
	}
	return h.Store.Storage.Codec
}

// Key is the etcd key of the object name in namespace: the store's own
// KeyFunc, under the etcd prefix the storage layer puts in front of it.
func (h *Handle) Key(namespace, name string) (string, error) {
	if h.Store == nil {
		return "", h.notStored()
	}
	key, err := h.Store.KeyFunc(genericapirequest.WithNamespace(context.Background(), namespace), name)
	if err != nil {
		return "", fmt.Errorf("computing the key of %s %q: %w", h.Path, name, err)
	}
	return h.underEtcdPrefix(key), nil
}

// KeyPrefix is the prefix of every key the path's store holds in namespace
// (in all namespaces when it is empty), ending in "/".
func (h *Handle) KeyPrefix(namespace string) (string, error) {
	if h.Store == nil {
		return "", h.notStored()
	}
	return h.underEtcdPrefix(h.Store.KeyRootFunc(genericapirequest.WithNamespace(context.Background(), namespace))) + "/", nil
}

// underEtcdPrefix puts a store key under --etcd-prefix, as the etcd3 storage
// layer does.
func (h *Handle) underEtcdPrefix(key string) string {
	return strings.TrimSuffix(gopath.Join("/", h.EtcdPrefix), "/") + "/" + strings.TrimPrefix(key, "/")
}

func (h *Handle) notStored() error { return fmt.Errorf("%s is not stored in etcd", h.Path) }

// Codec is how a path's objects pass between its store and the user: the
// serializer, convertors and hub version the apiserver's installer puts in
// the path's handlers.RequestScope. Built-in groups take them from their
// APIGroupInfo (legacyscheme, or the apiextensions and aggregator schemes);
// a custom resource takes those the CRD handler built for its version, which
// hold its schema (defaulting, pruning) and its conversion.
type Codec struct {
	// Serializer decodes manifests: its strict JSON serializer, to Hub.
	Serializer runtime.NegotiatedSerializer
	// Convertor converts the store's objects to the served version, and
	// field selector labels.
	Convertor runtime.ObjectConvertor
	// UnsafeConvertor converts without copying, for objects nothing else
	// holds.
	UnsafeConvertor runtime.ObjectConvertor
	// Hub is the version a store holds objects in: the group's internal
	// version, or for a custom resource the version served.
	Hub schema.GroupVersion
}

// Keyspace is what a command on every stored resource works through: the
// client of `--etcd-servers`, the etcd prefix, and the map's handles in
// route table order (the resources kept on other servers reached through
// their own).
type Keyspace struct {
	Client     *clientv3.Client
	EtcdPrefix string
	Handles    []*Handle
}
