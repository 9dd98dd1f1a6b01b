// Package agreement checks regctl against a real kube-apiserver v1.36.3 run
// in-process on an embedded etcd, and against upstream's storage-path data.
package agreement

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"testing"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/storage/etcd3/testserver"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/kubernetes"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	"k8s.io/kubernetes/test/integration/etcd"

	"github.com/regctl/regctl/internal/logs"
	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/wiring"
)

func TestMain(m *testing.M) {
	logs.Setup(0, io.Discard)
	os.Exit(m.Run())
}

func buildRegctl(t *testing.T, args ...string) *wiring.Wiring {
	t.Helper()
	opts := wiring.NewOptions()
	fs := pflag.NewFlagSet("regctl", pflag.ContinueOnError)
	opts.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	w, err := wiring.Build(context.Background(), wiring.Config{Options: opts, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("building regctl's map: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// TestDiscoveryAgreesWithKubeAPIServer starts a default kube-apiserver on an
// embedded etcd, reads its /api/v1 discovery, and compares every path with
// regctl's route table built against the same etcd.
func TestDiscoveryAgreesWithKubeAPIServer(t *testing.T) {
	etcdClient := testserver.RunEtcd(t, nil)
	endpoint := etcdClient.Endpoints()[0]
	storageConfig := storagebackend.NewDefaultConfig("/registry", nil)
	storageConfig.Transport.ServerList = []string{endpoint}
	server := kubeapiservertesting.StartTestServerOrDie(t, nil, nil, storageConfig)
	t.Cleanup(server.TearDownFn)

	client, err := kubernetes.NewForConfig(server.ClientConfig)
	if err != nil {
		t.Fatal(err)
	}
	list, err := client.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatalf("reading the server's /api/v1 discovery: %v", err)
	}

	w := buildRegctl(t, "--etcd-servers="+endpoint)
	routes := map[string]routetable.Route{}
	for _, r := range w.Table.Routes {
		routes[r.Path] = r
	}
	if len(list.APIResources) != len(routes) {
		t.Errorf("server serves %d paths under /api/v1, regctl has %d", len(list.APIResources), len(routes))
	}
	for _, want := range list.APIResources {
		got, ok := routes[want.Name]
		if !ok {
			t.Errorf("%s: served by kube-apiserver, missing from regctl", want.Name)
			continue
		}
		wantGroup, wantVersion := want.Group, want.Version
		if wantGroup == "" && wantVersion == "" {
			wantVersion = "v1"
		}
		checks := []struct{ field, got, want string }{
			{"scope", got.Scope, scopeOf(want)},
			{"kind", got.Kind, want.Kind},
			{"group", got.Group, wantGroup},
			{"version", got.Version, wantVersion},
			{"verbs", js(got.Verbs), js([]string(want.Verbs))},
			{"shortNames", js(got.ShortNames), js(want.ShortNames)},
			{"categories", js(got.Categories), js(want.Categories)},
			{"storageVersionHash", got.StorageVersionHash, want.StorageVersionHash},
		}
		for _, c := range checks {
			if c.got != c.want {
				t.Errorf("%s: %s = %s, kube-apiserver says %s", want.Name, c.field, c.got, c.want)
			}
		}
	}
}

// TestKeysAgreeWithUpstreamStorageData checks every core v1 resource in
// upstream's etcd storage-path data: the key regctl's store computes for the
// object is the ExpectedEtcdPath, and lies under the route's key prefix.
func TestKeysAgreeWithUpstreamStorageData(t *testing.T) {
	const namespace = "etcdstoragepathtestnamespace"
	w := buildRegctl(t)
	routes := map[string]routetable.Route{}
	for _, r := range w.Table.Routes {
		routes[r.Path] = r
	}
	checked := 0
	for gvr, data := range etcd.GetEtcdStorageDataForNamespace(namespace) {
		if gvr.Group != "" || gvr.Version != "v1" {
			continue
		}
		checked++
		route, ok := routes[gvr.Resource]
		if !ok {
			t.Errorf("%s: in upstream storage data, missing from regctl", gvr.Resource)
			continue
		}
		var stub struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		if err := json.Unmarshal([]byte(data.Stub), &stub); err != nil {
			t.Fatalf("%s: reading stub: %v", gvr.Resource, err)
		}
		ns := ""
		if route.Scope == "Namespaced" {
			ns = namespace
		}
		key, err := w.Handles[gvr.Resource].Key(ns, stub.Metadata.Name)
		if err != nil {
			t.Fatalf("%s: computing key: %v", gvr.Resource, err)
		}
		if key != data.ExpectedEtcdPath {
			t.Errorf("%s: store key %q, upstream expects %q", gvr.Resource, key, data.ExpectedEtcdPath)
		}
		if len(key) <= len(route.KeyPrefix) || key[:len(route.KeyPrefix)] != route.KeyPrefix {
			t.Errorf("%s: key %q is not under keyPrefix %q", gvr.Resource, key, route.KeyPrefix)
		}
	}
	if checked != 15 {
		t.Errorf("checked %d core v1 resources, want the 15 in upstream's data", checked)
	}
}

func scopeOf(r metav1.APIResource) string {
	if r.Namespaced {
		return "Namespaced"
	}
	return "Cluster"
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
