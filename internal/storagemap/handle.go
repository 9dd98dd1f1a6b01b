package storagemap

import (
	"context"
	"strings"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/storagemap/extensions"
	"github.com/regctl/regctl/internal/storagemap/served"
)

// fieldManagerOf builds, once and when first asked, the field manager of
// the path p of a built-in group's version v, as the installer builds it.
func (s *Session) fieldManagerOf(v served.Version, p string, res metav1.APIResource, storage rest.Storage) func() (*handle.FieldManager, error) {
	if v.Info == nil {
		// A custom resource's is its served handle's (extensions.ServedHandle).
		return nil
	}
	_, sub, _ := strings.Cut(p, "/")
	kind := schema.GroupVersionKind{Group: res.Group, Version: res.Version, Kind: res.Kind}
	return sync.OnceValues(func() (*handle.FieldManager, error) {
		fm, err := served.GroupFieldManager(s.models, v.Info, kind, sub, storage)
		if err != nil {
			return nil, err
		}
		return &handle.FieldManager{FieldManager: fm, Creater: v.Info.Scheme, Kind: kind}, nil
	})
}

// handles builds the map's handle for every path.
func (s *Session) handles(versions []served.Version) map[string]*handle.Handle {
	s.Map.crds = map[string]string{}
	routes := map[string]routetable.Route{}
	for _, r := range s.Map.Table.Routes {
		routes[r.Path] = r
	}
	out := make(map[string]*handle.Handle, len(routes))
	for _, v := range versions {
		byPath := map[string]metav1.APIResource{}
		for _, r := range v.Resources {
			byPath[r.Name] = r
		}
		for p, storage := range v.Installed() {
			res := byPath[p]
			if base, _, isSub := strings.Cut(p, "/"); isSub {
				// Discovery gives a subresource the kind it serves, but
				// scope comes from its resource.
				res.Namespaced = byPath[base].Namespaced
			}
			path := served.RoutePath(v, p)
			h := &handle.Handle{Path: path, Route: routes[path], Resource: res, Storage: storage, Store: s.Map.reaches[path].Store, Codec: served.CodecFor(v, p, res), EtcdPrefix: s.Map.Table.EtcdPrefix}
			h.Dial = s.Client
			h.NewFieldManager = s.fieldManagerOf(v, p, res, storage)
			h.Warnings = served.PathWarnings(v, p, schema.GroupVersionKind{Group: res.Group, Version: res.Version, Kind: res.Kind})
			if h.Store != nil {
				if d, ok := s.getter.Decision(h.Store.DefaultQualifiedResource); ok {
					tc := d.Transport
					h.ValueTransformer = d.Transformer
					h.Dial = func(ctx context.Context) (*clientv3.Client, error) { return s.clientOn(ctx, tc) }
				}
			}
			if crd := v.CRDs[p]; crd != "" {
				// Custom resources are built for serving when a command
				// reads or writes them (Map.serving, or Handle.Serving
				// for a caller that lets them go).
				s.Map.crds[path] = crd
				crs, route := s.Map.crs, h
				h.Serve = func() (*handle.Handle, error) {
					versions, err := crs.Build(crd)
					if err != nil {
						return nil, err
					}
					return extensions.ServedHandle(route, versions)
				}
			}
			if path == "services" && s.clusterIPs != nil && h.Store != nil {
				h.Allocators = s.clusterIPs.Of(h.Store)
			}
			out[path] = h
		}
	}
	return out
}
