package wiring

import (
	"context"
	"fmt"
	gopath "path"
	"strings"
	"sync"

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

	etcdPrefix   string
	transformer  value.Transformer
	storageCodec runtime.Codec
	client       func(context.Context) (*clientv3.Client, error)
	allocators   func(context.Context) error
	fieldManager func() (*FieldManager, error)
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
	creater runtime.ObjectCreater
	kind    schema.GroupVersionKind
}

// Create is what the create handler does to an object before the store
// creates it: the manager's update of a new, empty object of the path's
// kind. As on the server, a failure clears managedFields and is no error.
func (f *FieldManager) Create(obj runtime.Object, manager string) (runtime.Object, error) {
	live, err := f.creater.New(f.kind)
	if err != nil {
		return nil, fmt.Errorf("creating a new %s: %w", f.kind, err)
	}
	return f.UpdateNoErrors(live, obj, manager), nil
}

// FieldManager is the path's field manager, built on first use.
func (h *Handle) FieldManager() (*FieldManager, error) {
	if h.fieldManager == nil {
		return nil, fmt.Errorf("regctl bug: %s has no field manager", h.Path)
	}
	return h.fieldManager()
}

// ReadyAllocators readies what the path's store allocates from beyond its
// own etcd keys, for a write that allocates or releases: the services
// store's cluster IP allocator, which reads ServiceCIDR and IPAddress
// objects through informers that only this starts. Reads never call it.
// For other paths it does nothing.
func (h *Handle) ReadyAllocators(ctx context.Context) error {
	if h.allocators == nil {
		return nil
	}
	return h.allocators(ctx)
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
	return h.client(ctx)
}

// Transformer is the storage transformer (encryption) of the path's store,
// nil when values are stored as they are encoded.
func (h *Handle) Transformer() value.Transformer { return h.transformer }

// StorageCodec is the codec the server's store decodes a value with once
// it is decrypted (and encodes one with before encrypting it); nil for a
// path that never touches etcd.
func (h *Handle) StorageCodec() runtime.Codec { return h.storageCodec }

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
	return strings.TrimSuffix(gopath.Join("/", h.etcdPrefix), "/") + "/" + strings.TrimPrefix(key, "/")
}

// fieldManagerOf builds, once and when first asked, the field manager of
// the path p of v: a built-in group's as the installer builds it, a custom
// resource's the one the CRD handler built.
func (w *Wiring) fieldManagerOf(v servedVersion, p string, res metav1.APIResource, s rest.Storage) func() (*FieldManager, error) {
	if v.info == nil {
		fm := v.fieldManagers[p]
		return func() (*FieldManager, error) {
			if fm == nil {
				return nil, fmt.Errorf("regctl bug: the CRD handler built no field manager for %s", p)
			}
			return fm, nil
		}
	}
	_, sub, _ := strings.Cut(p, "/")
	kind := schema.GroupVersionKind{Group: res.Group, Version: res.Version, Kind: res.Kind}
	return sync.OnceValues(func() (*FieldManager, error) {
		fm, err := groupFieldManager(w.models, v.info, kind, sub, s)
		if err != nil {
			return nil, err
		}
		return &FieldManager{FieldManager: fm, creater: v.info.Scheme, kind: kind}, nil
	})
}

func (h *Handle) notStored() error { return fmt.Errorf("%s is not stored in etcd", h.Path) }

// handles builds the map's handle for every path.
func (w *Wiring) handles(versions []servedVersion) map[string]*Handle {
	routes := map[string]routetable.Route{}
	for _, r := range w.Table.Routes {
		routes[r.Path] = r
	}
	out := make(map[string]*Handle, len(routes))
	for _, v := range versions {
		byPath := map[string]metav1.APIResource{}
		for _, r := range v.resources {
			byPath[r.Name] = r
		}
		for p, s := range v.installed() {
			res := byPath[p]
			if base, _, isSub := strings.Cut(p, "/"); isSub {
				// Discovery gives a subresource the kind it serves, but
				// scope comes from its resource.
				res.Namespaced = byPath[base].Namespaced
			}
			path := routePath(v, p)
			h := &Handle{Path: path, Route: routes[path], Resource: res, Storage: s, Store: w.owners[path].store, Codec: codecFor(v, p, res), etcdPrefix: w.Table.EtcdPrefix}
			h.client = w.Client
			h.fieldManager = w.fieldManagerOf(v, p, res, s)
			h.Warnings = pathWarnings(v, p, schema.GroupVersionKind{Group: res.Group, Version: res.Version, Kind: res.Kind})
			if h.Store != nil {
				if d, ok := w.getter.decision(h.Store.DefaultQualifiedResource); ok {
					tc := d.transport
					h.transformer = d.transformer
					h.storageCodec = d.codec
					h.client = func(ctx context.Context) (*clientv3.Client, error) { return w.clientOn(ctx, tc) }
				}
			}
			if path == "services" && w.clusterIPs != nil && h.Store != nil {
				w.clusterIPs.store = h.Store
				h.allocators = w.clusterIPs.Ready
			}
			out[path] = h
		}
	}
	return out
}
