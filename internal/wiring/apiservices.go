package wiring

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kube-aggregator/pkg/apis/apiregistration"

	"github.com/regctl/regctl/internal/routetable"
)

// proxiedRoutes are the group versions the aggregator proxies: one route
// per APIService stored in etcd that a service backs, named as the
// APIService is (v1beta1.metrics.k8s.io), with no key prefix: their objects
// are in whatever the service stores them in, not in this etcd. Local
// APIServices (no service) are the groups of the map already. The
// APIServices are read once through the APIService store of versions.
func proxiedRoutes(ctx context.Context, versions []servedVersion) ([]routetable.Route, error) {
	var lister rest.Lister
	for _, v := range versions {
		if l, ok := v.stores["apiservices"].(rest.Lister); ok && v.gv.Group == apiregistration.GroupName {
			lister = l
		}
	}
	if lister == nil {
		return nil, nil
	}
	list, err := lister.List(genericapirequest.WithNamespace(ctx, ""), &metainternalversion.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the apiservices: %w", err)
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
