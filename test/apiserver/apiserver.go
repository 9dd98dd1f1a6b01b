// Package apiserver runs a real kube-apiserver of the release regctl is built
// with (k8s.io/kubernetes of go.mod, or of releases/) in-process on an
// embedded etcd for regctl's agreement tests, and fills it with one object of
// every resource it serves from upstream's storage test data.
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
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	"k8s.io/kubernetes/test/integration/etcd"

	"github.com/regctl/regctl/internal/etcdview/embedded"
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
// no controller creates the default service accounts it requires. The etcd
// is regctl's embedded one, which tries other free ports when another
// process takes the one it found first (the tests of several packages, and
// the agreement tests' own processes, start etcds side by side).
func Start(t testing.TB, flags ...string) *Server {
	t.Helper()
	e, err := embedded.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	storageConfig := storagebackend.NewDefaultConfig("/registry", nil)
	storageConfig.Transport.ServerList = []string{e.ClientURL}
	return StartOn(t, storageConfig, flags...)
}

// StartOn runs a kube-apiserver on the etcd storage names (its first
// server, with its TLS files), which the caller runs; the server stops when
// the test ends. It authenticates its clients by token alone: the client
// and front-proxy CAs upstream's test server makes otherwise are two RSA
// keys for each server, and no test authenticates by certificate.
func StartOn(t testing.TB, storageConfig *storagebackend.Config, flags ...string) *Server {
	t.Helper()
	endpoint := storageConfig.Transport.ServerList[0]
	flags = append([]string{"--disable-admission-plugins=ServiceAccount"}, flags...)
	server := kubeapiservertesting.StartTestServerOrDie(t, instanceOptions(), flags, storageConfig)
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
	GVR       schema.GroupVersionResource
	Namespace string // empty for cluster-scoped
	Name      string
	// ExpectedEtcdPath is where upstream says the object is stored.
	ExpectedEtcdPath string
}

// Arg names the object as kubectl's get takes it: resource.version.group/name,
// or resource/name for the core group.
func (o Object) Arg() string {
	if o.GVR.Group == "" {
		return o.GVR.Resource + "/" + o.Name
	}
	return o.GVR.Resource + "." + o.GVR.Version + "." + o.GVR.Group + "/" + o.Name
}

// Path is the object's path on the apiserver.
func (o Object) Path() string {
	p := "/apis/" + o.GVR.Group + "/" + o.GVR.Version
	if o.GVR.Group == "" {
		p = "/api/" + o.GVR.Version
	}
	if o.Namespace != "" {
		p += "/namespaces/" + o.Namespace
	}
	return p + "/" + o.GVR.Resource + "/" + o.Name
}

// CreateObjects creates, through the apiserver, one object of every
// resource in upstream's etcd storage data that the server serves and keep
// accepts (with its prerequisites), in namespace ns, and returns them sorted
// by group, version and resource.
func CreateObjects(t testing.TB, s *Server, ns string, keep func(schema.GroupVersionResource) bool) []Object {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", ns, err)
	}
	served := servedResources(t, s)
	var out []Object
	for gvr, data := range etcd.GetEtcdStorageDataForNamespace(ns) {
		if _, ok := served[gvr]; !ok || !keep(gvr) {
			continue
		}
		CreatePrerequisites(t, s, ns, data)
		obj := create(t, s, served, gvr, ns, data.Stub)
		out = append(out, Object{GVR: gvr, Namespace: obj.GetNamespace(), Name: obj.GetName(), ExpectedEtcdPath: data.ExpectedEtcdPath})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GVR.String() < out[j].GVR.String() })
	return out
}

// CreatePrerequisites creates, through the apiserver, the objects upstream
// says an object of its storage data needs first.
func CreatePrerequisites(t testing.TB, s *Server, ns string, data etcd.StorageData) {
	t.Helper()
	if len(data.Prerequisites) == 0 {
		return
	}
	served := servedResources(t, s)
	for _, pre := range data.Prerequisites {
		create(t, s, served, pre.GvrData, ns, pre.Stub)
	}
}

// CreateCoreObjects is CreateObjects for the core v1 resources alone.
func CreateCoreObjects(t testing.TB, s *Server, ns string) []Object {
	return CreateObjects(t, s, ns, func(gvr schema.GroupVersionResource) bool { return gvr.Group == "" && gvr.Version == "v1" })
}

// servedResources is the server's discovery: every resource it serves, and
// whether it is namespaced.
func servedResources(t testing.TB, s *Server) map[schema.GroupVersionResource]bool {
	t.Helper()
	_, lists, err := s.Client.Discovery().ServerGroupsAndResources()
	if err != nil {
		t.Fatalf("reading the server's discovery: %v", err)
	}
	out := map[schema.GroupVersionResource]bool{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.APIResources {
			out[gv.WithResource(r.Name)] = r.Namespaced
		}
	}
	return out
}

func create(t testing.TB, s *Server, served map[schema.GroupVersionResource]bool, gvr schema.GroupVersionResource, ns, stub string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(stub), &u.Object); err != nil {
		t.Fatalf("reading %s stub: %v", gvr, err)
	}
	res := s.Dynamic.Resource(gvr)
	var ri dynamic.ResourceInterface = res
	if served[gvr] {
		ri = res.Namespace(ns)
	}
	created, err := ri.Create(context.Background(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating %s %s: %v", gvr, u.GetName(), err)
	}
	return created
}
