package clusterips_test

import (
	"context"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/regctl/regctl/internal/logs/logstest"
	"github.com/regctl/regctl/internal/storagemap/clusterips"
	"github.com/regctl/regctl/internal/storagemap/maptest"
)

func TestMain(m *testing.M) { logstest.Main(m) }

func revision(t *testing.T, c *clientv3.Client) int64 {
	t.Helper()
	resp, err := c.Get(context.Background(), "/", clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

// TestReadyingNeedsAServiceCIDRAndWritesNothing, on a map's etcd through
// its loopback client: nothing starts before a write readies the
// allocator; with no ServiceCIDR in etcd it is refused on one line, and
// again from the informers it started; with one, the
// allocator is ready, and finding that out (a dry-run allocation) wrote
// nothing.
func TestReadyingNeedsAServiceCIDRAndWritesNothing(t *testing.T) {
	ctx := context.Background()
	s, etcd := maptest.Open(t)
	client, err := kubernetes.NewForConfig(s.LoopbackConfig())
	if err != nil {
		t.Fatal(err)
	}
	services := s.Map.Handles["services"]
	// A long timeout: a refusal that came from waiting it out would be
	// another error.
	a, err := clusterips.New(informers.NewSharedInformerFactory(client, 0), "", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	ready := a.Of(services.Store)
	if a.Started() {
		t.Fatal("the informers started before any write")
	}
	err = ready(ctx)
	if err == nil || !strings.HasPrefix(err.Error(), "no IPv4 ServiceCIDR in etcd: ") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("with no ServiceCIDR: %v", err)
	}
	if !a.Started() {
		t.Error("readying started no informer")
	}
	if again := ready(ctx); again == nil || again.Error() != err.Error() {
		t.Errorf("readying again: %v, want the first answer, %v", again, err)
	}

	cidr := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes"}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.0.0.0/24"}}}
	if _, err := client.NetworkingV1().ServiceCIDRs().Create(ctx, cidr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The map's own allocator, whose informers the service store's
	// MetaAllocator learns from, has not been readied yet.
	before := revision(t, etcd)
	if err := services.ReadyAllocators(ctx); err != nil {
		t.Fatalf("with a ServiceCIDR: %v", err)
	}
	if after := revision(t, etcd); after != before {
		t.Errorf("readying the allocator moved the revision from %d to %d", before, after)
	}
}
