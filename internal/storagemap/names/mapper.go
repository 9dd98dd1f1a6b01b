// Package names resolves what a user names (resource, resource.group,
// short names, categories, kinds) as kubectl does, with kubectl's own
// RESTMapper and expanders, on the map's discovery in the order the
// server's discovery lists it.
package names

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/restmapper"

	"github.com/regctl/regctl/internal/storagemap/served"
)

// Mapper builds kubectl's name resolution on the names of the map's
// resources, as the server's discovery has them: the discovery RESTMapper behind a short-name expander, and the
// category expander behind `all`. Groups and versions come in the order of
// the server's discovery, which is how kubectl breaks ties between groups
// (events before events.events.k8s.io) and orders a category's resources
// (`get all`: pods, services, ..., daemonsets, deployments, ...).
func Mapper(versions []served.Version) (meta.RESTMapper, restmapper.CategoryExpander, error) {
	ranks, err := discoveryRanks(versions)
	if err != nil {
		return nil, nil, err
	}
	versions = slices.Clone(versions)
	slices.SortStableFunc(versions, func(a, b served.Version) int { return cmp.Compare(ranks[a.GV], ranks[b.GV]) })
	var groups []*restmapper.APIGroupResources
	byGroup := map[string]*restmapper.APIGroupResources{}
	var lists []*metav1.APIResourceList
	for _, v := range versions {
		g, ok := byGroup[v.GV.Group]
		if !ok {
			g = &restmapper.APIGroupResources{
				Group:              metav1.APIGroup{Name: v.GV.Group},
				VersionedResources: map[string][]metav1.APIResource{},
			}
			byGroup[v.GV.Group] = g
			groups = append(groups, g)
		}
		d := metav1.GroupVersionForDiscovery{GroupVersion: v.GV.String(), Version: v.GV.Version}
		g.Group.Versions = append(g.Group.Versions, d)
		if v.Preferred {
			g.Group.PreferredVersion = d
		}
		g.VersionedResources[v.GV.Version] = v.Names
		lists = append(lists, &metav1.APIResourceList{GroupVersion: v.GV.String(), APIResources: v.Names})
	}
	d := servedDiscovery{lists: lists}
	return restmapper.NewShortcutExpander(restmapper.NewDiscoveryRESTMapper(groups), d, func(string) {}),
		restmapper.NewDiscoveryCategoryExpander(d), nil
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
