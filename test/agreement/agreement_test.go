// Package agreement checks regctl against a real kube-apiserver v1.36.3 run
// in-process on an embedded etcd, and against upstream's storage-path data.
package agreement

import (
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/kubernetes/test/integration/etcd"

	"github.com/regctl/regctl/internal/logs"
	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/wiring"
	"github.com/regctl/regctl/test/apiserver"
)

func TestMain(m *testing.M) {
	logs.Setup(0, io.Discard)
	os.Exit(m.Run())
}

// TestDiscoveryAgreesWithKubeAPIServer starts a default kube-apiserver on an
// embedded etcd, reads its discovery of every group and version, and
// compares every path with regctl's route table built against the same etcd.
func TestDiscoveryAgreesWithKubeAPIServer(t *testing.T) {
	server := apiserver.Start(t)
	client, endpoint := server.Client, server.EtcdURL
	discoveryAgrees(t, client, apiserver.Map(t, "--etcd-servers="+endpoint))
}

// TestDiscoveryAgreesWithEveryAPIOn does the same with every API group
// version enabled, alpha and beta included.
func TestDiscoveryAgreesWithEveryAPIOn(t *testing.T) {
	server := apiserver.Start(t, "--runtime-config=api/all=true")
	client, endpoint := server.Client, server.EtcdURL
	discoveryAgrees(t, client, apiserver.Map(t, "--etcd-servers="+endpoint, "--runtime-config=api/all=true"))
}

// TestDiscoveryAgreesWithEveryAPIAndFeatureOn adds every alpha and beta
// feature, as upstream's storage path test runs: feature-gated resources and
// subresources appear in both. The gates are set in-process, where both the
// server (which copies them) and regctl's providers read them; the
// `--feature-gates` flag itself is regctl's next step.
func TestDiscoveryAgreesWithEveryAPIAndFeatureOn(t *testing.T) {
	featuregatetesting.SetFeatureGatesDuringTest(t, utilfeature.DefaultFeatureGate, featuregatetesting.FeatureOverrides{
		"AllAlpha": true,
		"AllBeta":  true,
	})
	server := apiserver.Start(t, "--runtime-config=api/all=true")
	client, endpoint := server.Client, server.EtcdURL
	w := apiserver.Map(t, "--etcd-servers="+endpoint, "--runtime-config=api/all=true")
	discoveryAgrees(t, client, w)
	if len(w.Table.Routes) < 150 {
		t.Errorf("%d routes with every API and feature on, want the alpha and beta ones too", len(w.Table.Routes))
	}
}

func discoveryAgrees(t *testing.T, client kubernetes.Interface, w *wiring.Wiring) {
	t.Helper()
	// Per group version, as the legacy discovery documents serve it: the
	// aggregated document has no storage version hashes.
	groups, err := client.Discovery().ServerGroups()
	if err != nil {
		t.Fatalf("reading the server's discovery: %v", err)
	}
	preferred := map[string]string{}
	var lists []*metav1.APIResourceList
	for _, g := range groups.Groups {
		preferred[g.Name] = g.PreferredVersion.Version
		for _, v := range g.Versions {
			list, err := client.Discovery().ServerResourcesForGroupVersion(v.GroupVersion)
			if err != nil {
				t.Fatalf("reading the server's discovery of %s: %v", v.GroupVersion, err)
			}
			lists = append(lists, list)
		}
	}
	routes := map[string]routetable.Route{}
	for _, r := range w.Table.Routes {
		routes[r.Path] = r
	}
	served := 0
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range list.APIResources {
			served++
			path := kubectlName(gv, preferred[gv.Group] == gv.Version, want.Name)
			got, ok := routes[path]
			if !ok {
				t.Errorf("%s: served by kube-apiserver at %s, missing from regctl", path, gv)
				continue
			}
			kindGV := ""
			if want.Group != "" || want.Version != "" {
				if k := (schema.GroupVersion{Group: want.Group, Version: want.Version}); k != gv {
					kindGV = k.String()
				}
			}
			checks := []struct{ field, got, want string }{
				{"scope", got.Scope, scopeOf(want)},
				{"kind", got.Kind, want.Kind},
				{"group", got.Group, gv.Group},
				{"version", got.Version, gv.Version},
				{"kindGroupVersion", got.KindGroupVersion, kindGV},
				{"verbs", js(got.Verbs), js([]string(want.Verbs))},
				{"shortNames", js(got.ShortNames), js(want.ShortNames)},
				{"categories", js(got.Categories), js(want.Categories)},
				{"storageVersionHash", got.StorageVersionHash, want.StorageVersionHash},
			}
			for _, c := range checks {
				if c.got != c.want {
					t.Errorf("%s: %s = %s, kube-apiserver says %s", path, c.field, c.got, c.want)
				}
			}
		}
	}
	if served != len(routes) {
		t.Errorf("server serves %d paths, regctl has %d", served, len(routes))
	}
}

// kubectlName is how regctl names a path: resource.group for the preferred
// version, resource.version.group for the others.
func kubectlName(gv schema.GroupVersion, preferred bool, installerPath string) string {
	resource, sub, isSub := strings.Cut(installerPath, "/")
	if !preferred {
		resource += "." + gv.Version
	}
	if gv.Group != "" {
		resource += "." + gv.Group
	}
	if isSub {
		resource += "/" + sub
	}
	return resource
}

// TestKeysAgreeWithUpstreamStorageData checks every entry of upstream's etcd
// storage-path data, with every API on as upstream's own path test runs
// (AllAlpha, AllBeta, api/all): the key regctl's store computes for the
// stub object is the ExpectedEtcdPath, under the route's key prefix, and
// the route's storage version is the ExpectedGVK's.
func TestKeysAgreeWithUpstreamStorageData(t *testing.T) {
	const namespace = "etcdstoragepathtestnamespace"
	featuregatetesting.SetFeatureGatesDuringTest(t, utilfeature.DefaultFeatureGate, featuregatetesting.FeatureOverrides{
		"AllAlpha": true,
		"AllBeta":  true,
	})
	w := apiserver.Map(t, "--runtime-config=api/all=true")
	preferred := map[string]string{}
	for _, r := range w.Table.Routes {
		if _, ok := preferred[r.Group]; !ok {
			preferred[r.Group] = r.Version
		}
	}
	// Upstream's data also holds the custom resources of the CRDs its test
	// creates first: they are checked with those CRDs.
	crdGroups := map[string]bool{}
	for _, crd := range etcd.GetCustomResourceDefinitionData() {
		crdGroups[crd.Spec.Group] = true
	}
	checked := 0
	data := etcd.GetEtcdStorageDataForNamespaceServedAt(namespace, "1.36", false)
	for gvr, d := range data {
		if crdGroups[gvr.Group] {
			continue
		}
		checked++
		path := kubectlName(gvr.GroupVersion(), preferred[gvr.Group] == gvr.Version, gvr.Resource)
		h, ok := w.Handles[path]
		if !ok {
			t.Errorf("%s: in upstream storage data, missing from regctl (no path %s)", gvr, path)
			continue
		}
		var stub struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		if err := json.Unmarshal([]byte(d.Stub), &stub); err != nil {
			t.Fatalf("%s: reading stub: %v", gvr, err)
		}
		ns := ""
		if h.Route.Scope == "Namespaced" {
			ns = namespace
		}
		key, err := h.Key(ns, stub.Metadata.Name)
		if err != nil {
			t.Fatalf("%s: computing key: %v", gvr, err)
		}
		if key != d.ExpectedEtcdPath {
			t.Errorf("%s: store key %q, upstream expects %q", gvr, key, d.ExpectedEtcdPath)
		}
		if !strings.HasPrefix(key, h.Route.KeyPrefix) {
			t.Errorf("%s: key %q is not under keyPrefix %q", gvr, key, h.Route.KeyPrefix)
		}
		wantVersion := gvr.GroupVersion().String()
		if d.ExpectedGVK != nil {
			wantVersion = d.ExpectedGVK.GroupVersion().String()
		}
		if h.Route.StorageVersion != wantVersion {
			t.Errorf("%s: storage version %s, upstream expects %s", gvr, h.Route.StorageVersion, wantVersion)
		}
	}
	if checked < 85 {
		t.Errorf("checked %d entries of upstream's data, want every built-in one (85)", checked)
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
