package wiring

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/restmapper"
)

// newMapper builds kubectl's name resolution on the server's discovery of
// the map: the discovery RESTMapper behind a short-name expander, and the
// category expander behind `all`.
func newMapper(discovered *metav1.APIResourceList) (meta.RESTMapper, restmapper.CategoryExpander) {
	gv := discovered.GroupVersion
	groups := []*restmapper.APIGroupResources{{
		Group: metav1.APIGroup{
			Versions:         []metav1.GroupVersionForDiscovery{{GroupVersion: gv, Version: gv}},
			PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: gv, Version: gv},
		},
		VersionedResources: map[string][]metav1.APIResource{gv: discovered.APIResources},
	}}
	d := servedDiscovery{lists: []*metav1.APIResourceList{discovered}}
	return restmapper.NewShortcutExpander(restmapper.NewDiscoveryRESTMapper(groups), d, func(string) {}),
		restmapper.NewDiscoveryCategoryExpander(d)
}

// servedDiscovery answers, from the map's own discovery, the one discovery
// call kubectl's short-name and category expanders make, so that they run
// without a server. Any other call panics on the nil interface, which
// regctl reports as its own bug.
type servedDiscovery struct {
	discovery.DiscoveryInterface
	lists []*metav1.APIResourceList
}

func (d servedDiscovery) ServerGroupsAndResources() ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	return nil, d.lists, nil
}
