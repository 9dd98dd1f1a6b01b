package extensions

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"k8s.io/kube-aggregator/pkg/apis/apiregistration"

	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/storagemap/served"
)

// proxiedRoutes are the group versions the aggregator proxies: one route
// per APIService stored in etcd that a service backs, named as the
// APIService is (v1beta1.metrics.k8s.io), with no key prefix: their objects
// are in whatever the service stores them in, not in this etcd. Local
// APIServices (no service) are the groups of the map already. The
// APIServices are read once through the APIService store of versions.
func proxiedRoutes(ctx context.Context, versions []served.Version) ([]routetable.Route, error) {
	list, err := listStore(ctx, versions, apiregistration.GroupName, "apiservices")
	if err != nil || list == nil {
		return nil, err
	}
	services, ok := list.(*apiregistration.APIServiceList)
	if !ok {
		return nil, fmt.Errorf("reading the apiservices: got a %T", list)
	}
	var out []routetable.Route
	for _, s := range services.Items {
		svc := s.Spec.Service
		if svc == nil {
			continue
		}
		out = append(out, routetable.Route{
			Path:      s.Name,
			Group:     s.Spec.Group,
			Version:   s.Spec.Version,
			Store:     routetable.StoreNone,
			Decorator: routetable.DecoratorNone,
			ProxiedTo: svc.Namespace + "/" + svc.Name + ":" + strconv.Itoa(int(svc.Port)),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}
