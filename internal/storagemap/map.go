package storagemap

import (
	"fmt"
	"net/http"
	"slices"
	"sync"

	restful "github.com/emicklei/go-restful/v3"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/restmapper"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/storagemap/extensions"
	"github.com/regctl/regctl/internal/storagemap/reach"
	"github.com/regctl/regctl/internal/storagemap/restoptions"
	"github.com/regctl/regctl/internal/storagemap/served"
	"github.com/regctl/regctl/internal/storagemap/wiring"
)

// Map is the storage map as a command uses it, read-only once built: the
// route table, one handle per path, and the resolver that maps what a user
// names (as kubectl does) to a handle.
type Map struct {
	Table routetable.RouteTable
	// Handles holds one handle per path, each with regctl's own storage for
	// it, built by the server's code but with undecorated storage (no watch
	// cache).
	Handles map[string]*handle.Handle

	mapper     meta.RESTMapper
	categories restmapper.CategoryExpander

	versions  []served.Version
	container *restful.Container
	reaches   map[string]reach.Path // how each route path reaches etcd
	// notEstablished are the CRDs in etcd not established yet, by the
	// kinds they would serve.
	notEstablished map[schema.GroupVersionKind]string
	// proxied are the routes the aggregator proxies to a service.
	proxied []routetable.Route
	// getter holds the server's storage decisions, watchCache why each
	// resource is decorated as it is (Describe).
	getter     *restoptions.Getter
	watchCache func(schema.GroupResource) string
	readers    func(schema.GroupResource) string
	loops      wiring.Loops

	// installed are the versions the map installed; wired is the table
	// with its routes' wiring, read once when first asked (Wired).
	installed []served.Version
	wireOnce  sync.Once
	wired     routetable.RouteTable

	// crs builds the custom resources' serving storage; crds names the CRD of
	// each custom resource path, and served the handles built for serving
	// so far (Map.serving), by path.
	crs    *extensions.Serving
	crds   map[string]string
	mu     sync.Mutex
	served map[string]*handle.Handle
}

// Wired is the route table with each route's wiring: constructors,
// strategies, store functions, selectable fields, triggers, indexers.
// Table leaves them out: reading them is reflection over every store,
// which only a command that prints or compares route tables needs.
func (m *Map) Wired() routetable.RouteTable {
	m.wireOnce.Do(func() {
		m.wired = m.Table
		m.wired.Routes = slices.Clone(m.Table.Routes)
		served.Wire(m.wired.Routes, m.installed, m.reaches, m.getter)
	})
	return m.wired
}

// Handle is the handle of path, ready to read and write its objects, an
// error naming the path when the map has none.
func (m *Map) Handle(path string) (*handle.Handle, error) {
	if h, ok := m.Handles[path]; ok {
		return m.serving(h)
	}
	return nil, fmt.Errorf("%s is not a path of the storage map (see `regctl routes`)", path)
}

// Ordered is every handle in route table order, as the map lists them: a
// custom resource's defers what serving it takes (Handle.Serving), which a
// caller builds for the CRDs it reads. Routes with no handle are
// left out: the group versions the aggregator proxies to a service (as
// metrics-server's v1beta1.metrics.k8s.io) are routes whose objects are not
// in this etcd.
func (m *Map) Ordered() []*handle.Handle {
	out := make([]*handle.Handle, 0, len(m.Table.Routes))
	for _, r := range m.Table.Routes {
		if h, ok := m.Handles[r.Path]; ok {
			out = append(out, h)
		}
	}
	return out
}

// Subresource is the handle of the subresource sub of the resource h, h
// itself when sub is empty.
func (m *Map) Subresource(h *handle.Handle, sub string) (*handle.Handle, error) {
	if sub == "" {
		return h, nil
	}
	if s, ok := m.Handles[h.Path+"/"+sub]; ok {
		return m.serving(s)
	}
	return nil, fmt.Errorf("%s has no subresource %q", h.Path, sub)
}

// customResourceHandler is the CRD handler that serves req, a request for
// a custom resource of the map; nil for any other request.
func (m *Map) customResourceHandler(req *http.Request) http.Handler {
	info, ok := genericapirequest.RequestInfoFrom(req.Context())
	if !ok || !info.IsResourceRequest || m.crs == nil {
		return nil
	}
	for path, crd := range m.crds {
		h := m.Handles[path]
		if h == nil || h.Route.Subresource != "" || h.Route.Group != info.APIGroup || h.Route.Version != info.APIVersion || h.Route.Resource != info.Resource {
			continue
		}
		if _, err := m.serving(h); err != nil {
			return http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
				http.Error(rw, err.Error(), http.StatusInternalServerError)
			})
		}
		return m.crs.Handler(crd)
	}
	return nil
}
