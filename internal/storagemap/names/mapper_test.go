package names_test

import (
	"cmp"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/regctl/regctl/internal/logs/logstest"
	"github.com/regctl/regctl/internal/storagemap/maptest"
	"github.com/regctl/regctl/internal/storagemap/names"
	"github.com/regctl/regctl/internal/storagemap/served"
)

func TestMain(m *testing.M) { logstest.Main(m) }

// defaultVersions are the versions of a default server's map, as the
// installer's discovery names them, in the reverse of the server's order:
// the mapper must put them back in it.
func defaultVersions(t *testing.T) []served.Version {
	t.Helper()
	s, _ := maptest.Open(t)
	byGV := map[schema.GroupVersion]*served.Version{}
	for _, h := range s.Map.Ordered() {
		gv := schema.GroupVersion{Group: h.Route.Group, Version: h.Route.Version}
		v, ok := byGV[gv]
		if !ok {
			installerPath := h.Route.Resource
			if h.Route.Subresource != "" {
				installerPath += "/" + h.Route.Subresource
			}
			v = &served.Version{GV: gv}
			v.Preferred = served.RoutePath(served.Version{GV: gv, Preferred: true}, installerPath) == h.Path
			byGV[gv] = v
		}
		v.Names = append(v.Names, h.Resource)
	}
	var out []served.Version
	for _, v := range byGV {
		out = append(out, *v)
	}
	slices.SortFunc(out, func(a, b served.Version) int {
		return -cmp.Or(cmp.Compare(a.GV.Group, b.GV.Group), cmp.Compare(a.GV.Version, b.GV.Version))
	})
	return out
}

// TestMapperResolvesAsKubectlOnTheServersDiscovery: short names,
// resource.group, resource.version.group and kinds resolve as kubectl
// resolves them against a server; where two groups serve one name the
// core group wins, and `all` lists its resources in discovery order.
func TestMapperResolvesAsKubectlOnTheServersDiscovery(t *testing.T) {
	mapper, categories, err := names.Mapper(defaultVersions(t))
	if err != nil {
		t.Fatal(err)
	}
	for arg, want := range map[string]schema.GroupVersionResource{
		"deploy":              {Group: "apps", Version: "v1", Resource: "deployments"},
		"deployments.apps":    {Group: "apps", Version: "v1", Resource: "deployments"},
		"deployments.v1.apps": {Group: "apps", Version: "v1", Resource: "deployments"},
		"hpa":                 {Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"},
		"horizontalpodautoscalers.v1.autoscaling": {Group: "autoscaling", Version: "v1", Resource: "horizontalpodautoscalers"},
		"events":                   {Version: "v1", Resource: "events"},
		"events.events.k8s.io":     {Group: "events.k8s.io", Version: "v1", Resource: "events"},
		"po":                       {Version: "v1", Resource: "pods"},
		"customresourcedefinition": {Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"},
	} {
		// As kubectl's resource builder: resource.version.group when it
		// maps, else resource.group.
		full, gr := schema.ParseResourceArg(arg)
		got, err := schema.GroupVersionResource{}, error(nil)
		if full != nil {
			got, err = mapper.ResourceFor(*full)
		}
		if full == nil || err != nil {
			got, err = mapper.ResourceFor(gr.WithVersion(""))
		}
		if err != nil || got != want {
			t.Errorf("%s resolves to %v (%v), want %v", arg, got, err, want)
		}
	}
	m, err := mapper.RESTMapping(schema.GroupKind{Group: "apps", Kind: "Deployment"})
	if err != nil || m.Resource.Resource != "deployments" || m.Scope.Name() != "namespace" {
		t.Errorf("kind apps/Deployment maps to %+v (%v), want namespaced deployments", m, err)
	}

	expanded, ok := categories.Expand("all")
	if !ok {
		t.Fatal("no category all")
	}
	var all []string
	for _, gr := range expanded {
		all = append(all, gr.String())
	}
	want := []string{"pods", "replicationcontrollers", "services", "daemonsets.apps", "deployments.apps", "replicasets.apps",
		"statefulsets.apps", "horizontalpodautoscalers.autoscaling", "cronjobs.batch", "jobs.batch"}
	// Each version of a group lists its resources: autoscaling's two
	// come one after the other.
	if all = slices.Compact(all); !slices.Equal(all, want) {
		t.Errorf("all expands to\n%v\nwant kubectl's, in the server's discovery order\n%v", all, want)
	}
}
