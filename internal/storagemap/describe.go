package storagemap

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	serveroptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/kubernetes/pkg/kubeapiserver"

	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/storagemap/extensions"
	"github.com/regctl/regctl/internal/storagemap/reach"
	"github.com/regctl/regctl/internal/storagemap/served"
	"github.com/regctl/regctl/internal/storagemap/wiring"
)

// Describe is how the server wires path (`regctl routes describe`): its
// provider, storage, store, strategies, options, decorator and etcd3
// store, its subresources, and the HTTP routes the installer gives it. A
// custom resource's is its serving storage's, as the CRD handler builds it.
func (m *Map) Describe(path string) (wiring.Path, error) {
	for _, r := range m.proxied {
		if r.Path == path {
			// The aggregator proxies it: nothing of it is in etcd. The
			// aggregator server installs its proxy for each APIService.
			return wiring.Describe(wiring.Of{Route: r, Provider: extensions.AggregatorProvider}, nil, nil), nil
		}
	}
	h, err := m.Handle(path)
	if err != nil {
		return wiring.Path{}, err
	}
	// A subresource's store is its own copy of its resource's.
	store := reach.StoreIn(h.Storage, h.Store)
	w := wiring.Of{Route: h.Route, Storage: h.Storage, Store: store, EtcdPrefix: m.Table.EtcdPrefix, Loops: m.loops}
	for _, v := range m.versions {
		for p := range v.Stores {
			if served.RoutePath(v, p) == path {
				w.Provider = v.Provider
			}
		}
	}
	if store != nil && m.getter != nil {
		gr := store.DefaultQualifiedResource
		w.Decision, w.Found = m.getter.Decision(gr)
		w.WatchCache = m.watchCache(gr)
		w.Readers = m.readers(gr)
	}
	var subresources []string
	for _, r := range m.Table.Routes {
		if strings.HasPrefix(r.Path, path+"/") {
			subresources = append(subresources, r.Path)
		}
	}
	var http []routetable.HTTPRoute
	if m.crds[path] != "" {
		// The CRD handler serves custom resources, not the installer.
		return wiring.Describe(w, subresources, nil), nil
	}
	t, err := m.HTTPRoutes()
	if err != nil {
		return wiring.Path{}, err
	}
	for _, r := range t.Routes {
		if r.Group == h.Route.Group && r.Version == h.Route.Version && r.Resource == installerPath(h.Route) {
			http = append(http, r)
		}
	}
	return wiring.Describe(w, subresources, http), nil
}

// installerPath is the route's path as the installer names it:
// "deployments/scale".
func installerPath(r routetable.Route) string {
	if r.Subresource == "" {
		return r.Resource
	}
	return r.Resource + "/" + r.Subresource
}

// watchCacheReason says why the server's getter decorates a resource's
// store as it does, from the flags as the server read them (etcd, its
// sizes merged with kube-apiserver's defaults) and the sizes given.
func watchCacheReason(etcd serveroptions.EtcdOptions, given []string) func(schema.GroupResource) string {
	user, _ := serveroptions.ParseWatchCacheSizes(given)
	defaults := kubeapiserver.DefaultWatchCacheSizes()
	return func(gr schema.GroupResource) string {
		switch size, ok := user[gr]; {
		case !etcd.EnableWatchCache:
			return "--watch-cache=false"
		case ok:
			return fmt.Sprintf("--watch-cache-sizes gives %s#%d", gr, size)
		}
		if size, ok := defaults[gr]; ok {
			return fmt.Sprintf("kube-apiserver's DefaultWatchCacheSizes gives %s#%d", gr, size)
		}
		return "--watch-cache is on and no size is given for " + gr.String()
	}
}
