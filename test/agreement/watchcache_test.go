package agreement

import (
	"context"
	"regexp"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/test/apiserver"
)

// TestWatchCacheAgreesWithKubeAPIServer compares the resources the server
// builds a watch cache for, from its own watch cache metrics, with the
// stores regctl's table says are cacher-decorated, with a flag that turns
// one cache off.
func TestWatchCacheAgreesWithKubeAPIServer(t *testing.T) {
	// This process only waits for the other: it runs beside the rest.
	t.Parallel()
	if !inProcessOfItsOwn(t) {
		return
	}
	server := apiserver.Start(t, "--watch-cache-sizes=secrets#0")
	client, endpoint := server.Client, server.EtcdURL
	w := apiserver.Map(t, "--etcd-servers="+endpoint, "--watch-cache-sizes=secrets#0")
	regctl := map[string]bool{}
	for _, r := range w.Map.Table.Routes {
		if r.Store == routetable.StoreOwn && r.Decorator == routetable.DecoratorCacher {
			regctl[schema.GroupResource{Group: r.Group, Resource: r.Resource}.String()] = true
		}
	}
	// Watch caches initialize in the background once the server is up:
	// wait for them, then compare both ways.
	var cached map[string]bool
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		cached = watchCached(t, client)
		if len(cached) >= len(regctl) {
			break
		}
	}
	for gr := range cached {
		if !regctl[gr] {
			t.Errorf("%s: the server watch-caches it, regctl's table does not say cacher", gr)
		}
	}
	for gr := range regctl {
		if !cached[gr] {
			t.Errorf("%s: regctl's table says cacher, the server has no watch cache for it", gr)
		}
	}
	if len(regctl) < 50 || cached["secrets"] || cached["events"] {
		t.Errorf("regctl caches %d resources; the server caches secrets: %v, events: %v", len(regctl), cached["secrets"], cached["events"])
	}
}

// watchCached is the resources the server has initialized a watch cache
// for, from its own metrics.
func watchCached(t *testing.T, client kubernetes.Interface) map[string]bool {
	t.Helper()
	raw, err := client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("reading the server's metrics: %v", err)
	}
	cached := map[string]bool{}
	re := regexp.MustCompile(`(?m)^apiserver_watch_cache_initializations_total\{group="([^"]*)",resource="([^"]*)"\}`)
	for _, m := range re.FindAllStringSubmatch(string(raw), -1) {
		cached[schema.GroupResource{Group: m[1], Resource: m[2]}.String()] = true
	}
	return cached
}
