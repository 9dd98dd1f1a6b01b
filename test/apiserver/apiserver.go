// Package apiserver runs a real kube-apiserver v1.36.3 in-process on an
// embedded etcd for regctl's agreement tests, and fills it with one object of
// every core v1 resource from upstream's storage test data.
package apiserver

import (
	"context"
	"encoding/json"
	"sort"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/storage/etcd3/testserver"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	"k8s.io/kubernetes/test/integration/etcd"
)

// Server is a running kube-apiserver and the etcd it stores into.
type Server struct {
	EtcdURL string
	Config  *rest.Config
	Client  kubernetes.Interface
	Dynamic dynamic.Interface

	stop func()
}

// Stop stops the apiserver and leaves its etcd running, so that a test can
// check that reads write nothing: the server's controllers and leases would.
func (s *Server) Stop() { s.stop() }

// Start runs an etcd and a kube-apiserver with default flags plus extra ones;
// both stop when the test ends. The ServiceAccount admission plugin is off:
// no controller creates the default service accounts it requires.
func Start(t testing.TB, flags ...string) *Server {
	t.Helper()
	etcdClient := testserver.RunEtcd(t, nil)
	endpoint := etcdClient.Endpoints()[0]
	storageConfig := storagebackend.NewDefaultConfig("/registry", nil)
	storageConfig.Transport.ServerList = []string{endpoint}
	flags = append([]string{"--disable-admission-plugins=ServiceAccount"}, flags...)
	server := kubeapiservertesting.StartTestServerOrDie(t, nil, flags, storageConfig)
	stop := sync.OnceFunc(server.TearDownFn)
	t.Cleanup(stop)
	client, err := kubernetes.NewForConfig(server.ClientConfig)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(server.ClientConfig)
	if err != nil {
		t.Fatal(err)
	}
	return &Server{EtcdURL: endpoint, Config: server.ClientConfig, Client: client, Dynamic: dyn, stop: stop}
}

// Object is one object created from upstream's storage data.
type Object struct {
	Resource  string // plural core v1 resource
	Namespace string // empty for cluster-scoped
	Name      string
	// ExpectedEtcdPath is where upstream says the object is stored.
	ExpectedEtcdPath string
}

// CreateCoreObjects creates, through the apiserver, one object of every core
// v1 resource in upstream's etcd storage data (with its prerequisites), in
// namespace ns, and returns them sorted by resource.
func CreateCoreObjects(t testing.TB, s *Server, ns string) []Object {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", ns, err)
	}
	var out []Object
	for gvr, data := range etcd.GetEtcdStorageDataForNamespace(ns) {
		if gvr.Group != "" || gvr.Version != "v1" {
			continue
		}
		for _, pre := range data.Prerequisites {
			create(t, s, pre.GvrData, ns, pre.Stub)
		}
		obj := create(t, s, gvr, ns, data.Stub)
		out = append(out, Object{Resource: gvr.Resource, Namespace: obj.GetNamespace(), Name: obj.GetName(), ExpectedEtcdPath: data.ExpectedEtcdPath})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Resource < out[j].Resource })
	return out
}

func create(t testing.TB, s *Server, gvr schema.GroupVersionResource, ns, stub string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(stub), &u.Object); err != nil {
		t.Fatalf("reading %s stub: %v", gvr, err)
	}
	res := s.Dynamic.Resource(gvr)
	var ri dynamic.ResourceInterface = res
	if namespaced(t, s, gvr) {
		ri = res.Namespace(ns)
	}
	created, err := ri.Create(context.Background(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating %s %s: %v", gvr.Resource, u.GetName(), err)
	}
	return created
}

func namespaced(t testing.TB, s *Server, gvr schema.GroupVersionResource) bool {
	t.Helper()
	list, err := s.Client.Discovery().ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list.APIResources {
		if r.Name == gvr.Resource {
			return r.Namespaced
		}
	}
	t.Fatalf("%s is not served", gvr)
	return false
}
