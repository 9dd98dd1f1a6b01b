package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
	"github.com/regctl/regctl/test/apiserver"
)

// kubectlGetter gives cli-runtime's resource builder the server, as
// kubectl's config flags would.
type kubectlGetter struct {
	config    *rest.Config
	discovery discovery.CachedDiscoveryInterface
}

func (g kubectlGetter) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(g.config), nil }

func (g kubectlGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return g.discovery, nil
}

func (g kubectlGetter) ToRESTMapper() (meta.RESTMapper, error) {
	return restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(g.discovery), g.discovery, nil), nil
}

// kubectlAll is `all` as kubectl's builder expands it with its category
// expander over dc: the resources joined, then without repeats (a resource
// of two versions is listed twice), as ReplaceAliases and
// SplitResourceArgument do.
func kubectlAll(t *testing.T, dc discovery.DiscoveryInterface) []string {
	t.Helper()
	expanded, ok := restmapper.NewDiscoveryCategoryExpander(dc).Expand("all")
	if !ok || len(expanded) == 0 {
		t.Fatal("the server's discovery has no category all")
	}
	var names []string
	for _, gr := range expanded {
		names = append(names, gr.String())
	}
	return resource.SplitResourceArgument(strings.Join(names, ","))
}

// TestGetAllAgreesWithKubectl: kubectl expands `all` with its category
// expander over the server's discovery, so `kubectl get all` lists in
// discovery's order: the server's groups by their priorities (pods,
// services, then apps's daemonsets, deployments, ...), each group's
// resources as it lists them. regctl's `all` is the same resources in the
// same order, and `regctl get all` prints the objects kubectl's builder
// visits, in the same order.
//
// kubectl is given the server's discovery documents per group version
// (legacy discovery), which client-go returns in the server's group order.
// From the aggregated document client-go returns the group versions'
// resources from a map, in no set order: the same resources, which regctl
// also checks, in an order that changes from run to run.
func TestGetAllAgreesWithKubectl(t *testing.T) {
	t.Parallel()
	s := apiserver.Start(t)
	legacy := discovery.NewDiscoveryClientForConfigOrDie(s.Config)
	legacy.UseLegacyDiscovery = true
	dc := memory.NewMemCacheClient(legacy)
	want := kubectlAll(t, dc)
	aggregated := kubectlAll(t, discovery.NewDiscoveryClientForConfigOrDie(s.Config))
	slices.Sort(aggregated)
	if sorted := slices.Sorted(slices.Values(want)); !slices.Equal(sorted, aggregated) {
		t.Fatalf("kubectl's all is %q from legacy discovery, %q from aggregated", want, aggregated)
	}

	opts := serverflags.NewOptions()
	opts.Server.Etcd.StorageConfig.Transport.ServerList = []string{s.EtcdURL}
	w, err := storagemap.Open(context.Background(), storagemap.Config{Options: opts, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	handles, err := w.Map.ResolveList("all")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range handles {
		got = append(got, schema.GroupResource{Group: h.Route.Group, Resource: h.Route.Resource}.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("all is\n%q for regctl,\n%q for kubectl", got, want)
	}

	// One object of each resource of all, then get all as kubectl's
	// builder visits it and as regctl prints it.
	const ns = "regctl-all"
	apiserver.CreateObjects(t, s, ns, func(gvr schema.GroupVersionResource) bool {
		return slices.Contains(want, gvr.GroupResource().String())
	})
	infos, err := resource.NewBuilder(kubectlGetter{config: s.Config, discovery: dc}).Unstructured().
		NamespaceParam(ns).DefaultNamespace().ResourceTypeOrNameArgs(true, "all").Flatten().Latest().Do().Infos()
	if err != nil {
		t.Fatal(err)
	}
	// kubectl get -o name prints each object with its name printer.
	names, err := render.NamePrinter("")
	if err != nil {
		t.Fatal(err)
	}
	var printed strings.Builder
	for _, info := range infos {
		if err := names.PrintObj(info.Object, &printed); err != nil {
			t.Fatal(err)
		}
	}
	kubectl := strings.Fields(printed.String())
	if len(kubectl) < 8 {
		t.Fatalf("kubectl get all finds %q: want an object of most of its resources", kubectl)
	}
	regctl := strings.Fields(mustRun(t, "get", "all", "-n", ns, "-o", "name", "--etcd-servers="+s.EtcdURL))
	if !slices.Equal(regctl, kubectl) {
		t.Errorf("get all prints\n%q for regctl,\n%q for kubectl", regctl, kubectl)
	}
}
