package storagemap

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apiserver/pkg/registry/rest"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/networking"
	netutils "k8s.io/utils/net"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/stores"
)

// inNamespace is what a request to h in ns carries to its store.
func inNamespace(h *handle.Handle, ns string) context.Context {
	return stores.RequestContext(context.Background(), handle.Target{Handle: h, Namespace: ns})
}

// TestClusterIPAllocatorStartsForWritesOnly builds the map on an etcd no
// apiserver ever ran on: reading services starts nothing; readying the
// allocator fails at once, saying there is no ServiceCIDR; once one exists
// the service store allocates and releases through the loopback client.
func TestClusterIPAllocatorStartsForWritesOnly(t *testing.T) {
	w := build(t)
	services := w.Map.Handles["services"]
	if _, err := services.Storage.(rest.Lister).List(inNamespace(services, "default"), nil); err != nil {
		t.Fatal(err)
	}
	if w.clusterIPs.Started() {
		t.Fatal("a read started the allocator's informers")
	}

	start := time.Now()
	err := services.ReadyAllocators(context.Background())
	if err == nil || !strings.HasPrefix(err.Error(), "no IPv4 ServiceCIDR in etcd: ") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("with no ServiceCIDR: %v", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("the missing ServiceCIDR took %s to find", took)
	}
	if err := w.Map.Handles["pods"].ReadyAllocators(context.Background()); err != nil {
		t.Errorf("pods have no allocator to ready: %v", err)
	}

	cidr := &networking.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes"}, Spec: networking.ServiceCIDRSpec{CIDRs: []string{"10.0.0.0/24"}}}
	if _, err := w.Map.Handles["servicecidrs.networking.k8s.io"].Storage.(rest.Creater).Create(inNamespace(w.Map.Handles["servicecidrs.networking.k8s.io"], ""), cidr, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The allocator learned etcd holds none; a new map, as the next command
	// builds, lists the ServiceCIDR.
	etcdServers := "--etcd-servers=" + w.Embedded.ClientURL
	w = build(t, etcdServers)
	services = w.Map.Handles["services"]
	start = time.Now()
	if err := services.ReadyAllocators(context.Background()); err != nil {
		t.Fatalf("with a ServiceCIDR: %v", err)
	}
	t.Logf("the allocator was ready in %s", time.Since(start))
	// A map of another family than the cluster's is told which flag to pass.
	v6 := build(t, etcdServers, "--service-cluster-ip-range=fd00::/108")
	if err := v6.Map.Handles["services"].ReadyAllocators(context.Background()); err == nil || err.Error() != "no IPv6 ServiceCIDR in etcd, only IPv4 ones: pass the apiserver's `--service-cluster-ip-range`" {
		t.Errorf("an IPv6 map on an IPv4 cluster: %v", err)
	}

	cluster := api.ServiceInternalTrafficPolicyCluster
	svc := &api.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: api.ServiceSpec{
			Type: api.ServiceTypeClusterIP, SessionAffinity: api.ServiceAffinityNone, InternalTrafficPolicy: &cluster,
			Ports: []api.ServicePort{{Port: 80, Protocol: api.ProtocolTCP, TargetPort: intstr.FromInt32(80)}},
		},
	}
	out, err := services.Storage.(rest.Creater).Create(inNamespace(services, "default"), svc, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ip := out.(*api.Service).Spec.ClusterIP
	if _, subnet, _ := netutils.ParseCIDRSloppy("10.0.0.0/24"); !subnet.Contains(netutils.ParseIPSloppy(ip)) {
		t.Fatalf("allocated %q, not in the ServiceCIDR", ip)
	}
	ipAddressesPath := w.Map.Handles["ipaddresses.networking.k8s.io"]
	ipAddresses := ipAddressesPath.Storage.(rest.Getter)
	got, err := ipAddresses.Get(inNamespace(ipAddressesPath, ""), ip, &metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the IPAddress of %s: %v", ip, err)
	}
	if ref := got.(*networking.IPAddress).Spec.ParentRef; ref == nil || ref.Resource != "services" || ref.Namespace != "default" || ref.Name != "web" {
		t.Errorf("IPAddress %s refers to %+v", ip, ref)
	}

	if _, _, err := services.Storage.(rest.GracefulDeleter).Delete(inNamespace(services, "default"), "web", rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ipAddresses.Get(inNamespace(ipAddressesPath, ""), ip, &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after the delete, IPAddress %s: %v, want it gone", ip, err)
	}
}
