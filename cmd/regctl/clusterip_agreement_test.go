package main

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/regctl/regctl/test/apiserver"
)

// TestServiceAllocationsAgreeWithKubeAPIServer creates and deletes services
// with regctl on the etcd of a running kube-apiserver: regctl allocates
// cluster IPs and node ports as the server does, with the server's own
// allocators, and the server accepts and reuses what regctl allocated and
// released.
func TestServiceAllocationsAgreeWithKubeAPIServer(t *testing.T) {
	t.Parallel()
	s := apiserver.Start(t)
	etcdFlag := "--etcd-servers=" + s.EtcdURL
	ctx := context.Background()
	const ns = "regctl-ips"
	if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The server's own allocation, for reference.
	byServer, err := s.Client.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "by-server"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	serverIP := ipAddress(t, s, byServer.Spec.ClusterIP)

	web := createService(t, etcdFlag, ns, "web", "{ports: [{port: 80}], selector: {app: web}}")
	webIP := ipAddress(t, s, web.Spec.ClusterIP)
	t.Run("a cluster IP from the ServiceCIDR, held by an IPAddress like the server's", func(t *testing.T) {
		served, err := s.Client.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if web.Spec.ClusterIP == "" || served.Spec.ClusterIP != web.Spec.ClusterIP || strings.Join(served.Spec.ClusterIPs, ",") != web.Spec.ClusterIP {
			t.Fatalf("regctl printed cluster IP %q, the server serves %q %v", web.Spec.ClusterIP, served.Spec.ClusterIP, served.Spec.ClusterIPs)
		}
		cidr, err := s.Client.NetworkingV1().ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, subnet, _ := net.ParseCIDR(cidr.Spec.CIDRs[0]); !subnet.Contains(net.ParseIP(web.Spec.ClusterIP)) {
			t.Errorf("%s is not in the ServiceCIDR %v", web.Spec.ClusterIP, cidr.Spec.CIDRs)
		}
		got := ipAddress(t, s, web.Spec.ClusterIP)
		want := networkingv1.ParentReference{Group: "", Resource: "services", Namespace: ns, Name: "web"}
		if ref := got.Spec.ParentRef; ref == nil || *ref != want {
			t.Errorf("IPAddress %s refers to %+v, want %+v", got.Name, ref, want)
		}
		if a, b := ipAddressShape(t, got), ipAddressShape(t, serverIP); a != b {
			t.Errorf("regctl's IPAddress\n%s\nthe server's\n%s", a, b)
		}
		// The server refuses the address to a service that asks for it.
		taken := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "same-ip"}, Spec: corev1.ServiceSpec{ClusterIP: web.Spec.ClusterIP, Ports: []corev1.ServicePort{{Port: 80}}}}
		if _, err := s.Client.CoreV1().Services(ns).Create(ctx, taken, metav1.CreateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "already allocated") {
			t.Errorf("the server given regctl's cluster IP: %v, want it already allocated", err)
		}
	})

	np := createService(t, etcdFlag, ns, "np", "{type: NodePort, ports: [{port: 80}], selector: {app: np}}")
	port := np.Spec.Ports[0].NodePort
	npIP := ipAddress(t, s, np.Spec.ClusterIP)
	t.Run("a node port in range, taken in the server's bitmap", func(t *testing.T) {
		if port < 30000 || port > 32767 {
			t.Fatalf("node port %d, want one in 30000-32767", port)
		}
		served, err := s.Client.CoreV1().Services(ns).Get(ctx, "np", metav1.GetOptions{})
		if err != nil || served.Spec.Ports[0].NodePort != port || served.Spec.ClusterIP != np.Spec.ClusterIP {
			t.Fatalf("the server serves %+v (%v), regctl printed node port %d", served.Spec, err, port)
		}
		if _, err := s.Client.CoreV1().Services(ns).Create(ctx, nodePortService("same-port", port), metav1.CreateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "already allocated") {
			t.Errorf("the server given regctl's node port: %v, want it already allocated", err)
		}
	})

	t.Run("the server's repair loop finds nothing to repair", func(t *testing.T) {
		// It runs on the server's informers as objects change.
		time.Sleep(3 * time.Second)
		events, err := s.Client.EventsV1().Events("").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ours := map[string]bool{web.Spec.ClusterIP: true, np.Spec.ClusterIP: true}
		for _, e := range events.Items {
			// The server may repair its own kubernetes service, whose IP it
			// allocates before its ServiceCIDR exists.
			regctls := e.Regarding.Namespace == ns || e.Regarding.Kind == "IPAddress" && ours[e.Regarding.Name]
			// The repair loop watches services and IPAddresses apart: when
			// a service's event reaches it before its IPAddress's, it says
			// the IP is not allocated and tries to create the IPAddress,
			// which exists. That is the server's race, whoever allocated;
			// what counts is that regctl's IPAddress is left as it was.
			raced := e.Reason == "ClusterIPNotAllocated" && strings.HasSuffix(e.Note, "is not allocated; repairing")
			if regctls && !raced && (strings.Contains(e.Action, "Allocation") || strings.Contains(e.Action, "Validation")) {
				t.Errorf("the server says %s: %s", e.Reason, e.Note)
			}
		}
		for ip, uid := range map[string]types.UID{web.Spec.ClusterIP: webIP.UID, np.Spec.ClusterIP: npIP.UID} {
			if got := ipAddress(t, s, ip); got.UID != uid {
				t.Errorf("the server replaced regctl's IPAddress %s", ip)
			}
		}
	})

	t.Run("delete releases the cluster IP and the node port", func(t *testing.T) {
		mustRun(t, "delete", "services", "web", "np", "-n", ns, etcdFlag)
		for _, ip := range []string{web.Spec.ClusterIP, np.Spec.ClusterIP} {
			if _, err := s.Client.NetworkingV1().IPAddresses().Get(ctx, ip, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("IPAddress %s after the delete: %v, want it gone", ip, err)
			}
		}
		reuse := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "reuse-ip"}, Spec: corev1.ServiceSpec{ClusterIP: web.Spec.ClusterIP, Ports: []corev1.ServicePort{{Port: 80}}}}
		if _, err := s.Client.CoreV1().Services(ns).Create(ctx, reuse, metav1.CreateOptions{}); err != nil {
			t.Errorf("the server cannot reuse the released cluster IP: %v", err)
		}
		if _, err := s.Client.CoreV1().Services(ns).Create(ctx, nodePortService("reuse-port", port), metav1.CreateOptions{}); err != nil {
			t.Errorf("the server cannot reuse the released node port: %v", err)
		}
	})

	t.Run("replace allocates and releases as the type changes", func(t *testing.T) {
		ext := createService(t, etcdFlag, ns, "ext", "{type: ExternalName, externalName: db.example.com}")
		if ext.Spec.ClusterIP != "" {
			t.Fatalf("an ExternalName service got cluster IP %q", ext.Spec.ClusterIP)
		}
		toClusterIP := "apiVersion: v1\nkind: Service\nmetadata: {name: ext, resourceVersion: \"" + ext.ResourceVersion + "\"}\nspec: {ports: [{port: 80}]}\n"
		mustRun(t, "replace", "-f", manifestFile(t, toClusterIP), "-n", ns, etcdFlag)
		served, err := s.Client.CoreV1().Services(ns).Get(ctx, "ext", metav1.GetOptions{})
		if err != nil || served.Spec.ClusterIP == "" {
			t.Fatalf("after the replace the server serves %+v (%v)", served.Spec, err)
		}
		if repairDropsExternalNameIPs {
			// The server's repair loop, racing the update, may delete
			// the new IPAddress, whoever allocated it: whether it is
			// there says nothing of regctl.
			t.Logf("Kubernetes %s: the IPAddress of a service that was ExternalName is left to the server's repair loop", releaseVersion)
		} else if ref := ipAddress(t, s, served.Spec.ClusterIP).Spec.ParentRef; ref == nil || ref.Name != "ext" {
			t.Errorf("IPAddress %s refers to %+v", served.Spec.ClusterIP, ref)
		}
		toExternal := "apiVersion: v1\nkind: Service\nmetadata: {name: ext, resourceVersion: \"" + served.ResourceVersion + "\"}\nspec: {type: ExternalName, externalName: db.example.com}\n"
		mustRun(t, "replace", "-f", manifestFile(t, toExternal), "-n", ns, etcdFlag)
		if _, err := s.Client.NetworkingV1().IPAddresses().Get(ctx, served.Spec.ClusterIP, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("IPAddress %s after the service became ExternalName: %v, want it gone", served.Spec.ClusterIP, err)
		}
	})

	t.Run("regctl deletes a service the server created", func(t *testing.T) {
		mustRun(t, "delete", "services/by-server", "-n", ns, etcdFlag)
		if _, err := s.Client.NetworkingV1().IPAddresses().Get(ctx, byServer.Spec.ClusterIP, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("IPAddress %s after the delete: %v, want it gone", byServer.Spec.ClusterIP, err)
		}
	})
}

// createService creates a service with regctl and returns what it printed.
func createService(t *testing.T, etcdFlag, ns, name, spec string) *corev1.Service {
	t.Helper()
	m := "apiVersion: v1\nkind: Service\nmetadata: {name: " + name + "}\nspec: " + spec + "\n"
	out := mustRun(t, "create", "-f", manifestFile(t, m), "-n", ns, "-o", "json", etcdFlag)
	var svc corev1.Service
	if err := json.Unmarshal([]byte(out), &svc); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return &svc
}

func nodePortService(name string, port int32) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			Type:  corev1.ServiceTypeNodePort,
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(80), NodePort: port}},
		},
	}
}

func ipAddress(t *testing.T, s *apiserver.Server, ip string) *networkingv1.IPAddress {
	t.Helper()
	got, err := s.Client.NetworkingV1().IPAddresses().Get(context.Background(), ip, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the IPAddress of %s: %v", ip, err)
	}
	return got
}

// ipAddressShape is an IPAddress as JSON without what differs between two
// allocations: its name, identity and times, its parent's name, and the
// writer's name in managedFields (the loopback client's user agent: the
// binary's name, kube-apiserver or regctl).
func ipAddressShape(t *testing.T, ip *networkingv1.IPAddress) string {
	t.Helper()
	c := ip.DeepCopy()
	c.Name, c.UID, c.ResourceVersion, c.CreationTimestamp = "", "", "", metav1.Time{}
	for i := range c.ManagedFields {
		c.ManagedFields[i].Manager, c.ManagedFields[i].Time = "", nil
	}
	if c.Spec.ParentRef != nil {
		c.Spec.ParentRef.Name, c.Spec.ParentRef.Namespace = "", ""
	}
	out, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
