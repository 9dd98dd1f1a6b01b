// Package agreement checks regctl against a real kube-apiserver of its own release run
// in-process on an embedded etcd, and against upstream's storage-path data.
package agreement

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-base/version"
	"k8s.io/kubernetes/test/integration/etcd"

	"github.com/regctl/regctl/internal/logs"
	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/test/apiserver"
)

func TestMain(m *testing.M) {
	logs.Setup(0, io.Discard)
	// The tests run side by side, four at a time: a server's start is
	// mostly waiting. Those that set feature gates or an emulated version,
	// which are the process's, each run in a process of their own
	// (inProcessOfItsOwn).
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", "4")
	}
	os.Exit(m.Run())
}

// TestDiscoveryAgreesWithKubeAPIServer starts a default kube-apiserver on an
// embedded etcd, reads its discovery of every group and version, and
// compares every path with regctl's route table built against the same etcd.
func TestDiscoveryAgreesWithKubeAPIServer(t *testing.T) {
	t.Parallel()
	server := apiserver.Start(t)
	client, endpoint := server.Client, server.EtcdURL
	discoveryAgrees(t, client, apiserver.Map(t, "--etcd-servers="+endpoint))
}

// TestDiscoveryAgreesWithEveryAPIOn does the same with every API group
// version enabled, alpha and beta included.
func TestDiscoveryAgreesWithEveryAPIOn(t *testing.T) {
	t.Parallel()
	server := apiserver.Start(t, "--runtime-config=api/all=true")
	client, endpoint := server.Client, server.EtcdURL
	discoveryAgrees(t, client, apiserver.Map(t, "--etcd-servers="+endpoint, "--runtime-config=api/all=true"))
}

// everyAPIAndFeature are the flags of upstream's storage path test at the
// binary's version: every alpha and beta feature, every API version.
var everyAPIAndFeature = []string{"--feature-gates=AllAlpha=true,AllBeta=true", "--runtime-config=api/all=true"}

// TestDiscoveryAgreesWithEveryAPIAndFeatureOn adds every alpha and beta
// feature with --feature-gates: feature-gated resources and subresources
// appear in both. regctl's map is built first, so that what it serves comes
// from its own flags, not from gates the test server sets in this process.
func TestDiscoveryAgreesWithEveryAPIAndFeatureOn(t *testing.T) {
	t.Parallel()
	if !inProcessOfItsOwn(t) {
		return
	}
	w := apiserver.Map(t, everyAPIAndFeature...)
	w.Close()
	alpha := 0
	for _, r := range w.Map.Table.Routes {
		if strings.Contains(r.Version, "alpha") {
			alpha++
		}
	}
	if alpha == 0 {
		t.Errorf("%d routes with every API and feature on, none of an alpha version: want the alpha and beta ones too", len(w.Map.Table.Routes))
	}
	if !w.Map.Table.FeatureGates["AllAlpha"] || !w.Map.Table.FeatureGates["AllBeta"] {
		t.Errorf("the route table's featureGates lack the flags' gates: %v", w.Map.Table.FeatureGates)
	}
	server := apiserver.Start(t, everyAPIAndFeature...)
	discoveryAgrees(t, server.Client, w)
}

// TestEmulatedVersionAgreesWithKubeAPIServer builds the map of a server
// emulating the two minor versions before its own, as upstream's storage
// path test runs it (beta features and APIs on, alpha APIs off, later APIs
// forward compatible): its discovery and upstream's storage versions at
// that version agree with regctl's. Three back is the floor of what a
// server emulates, where upstream's test server, on a test version without
// that floor, and a real server part ways.
func TestEmulatedVersionAgreesWithKubeAPIServer(t *testing.T) {
	t.Parallel()
	for _, emulated := range []string{minorsBack(1), minorsBack(2)} {
		t.Run(emulated, func(t *testing.T) {
			t.Parallel()
			if !inProcessOfItsOwn(t) {
				return
			}
			flags := []string{"--emulated-version=" + emulated, "--feature-gates=AllBeta=true", "--emulation-forward-compatible", "--runtime-config=api/all=true,api/alpha=false"}
			w := apiserver.Map(t, flags...)
			w.Close()
			if w.Map.Table.EmulatedVersion != emulated {
				t.Errorf("route table emulatedVersion %q, want %s", w.Map.Table.EmulatedVersion, emulated)
			}
			storageDataAgrees(t, w, etcd.GetEtcdStorageDataForNamespaceServedAt(storageDataNamespace, emulated, true), minStorageData)
			server := apiserver.Start(t, flags...)
			discoveryAgrees(t, server.Client, w)
		})
	}
}

func discoveryAgrees(t *testing.T, client kubernetes.Interface, w *storagemap.Session) {
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
	for _, r := range w.Map.Table.Routes {
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

const storageDataNamespace = "etcdstoragepathtestnamespace"

// TestKeysAgreeWithUpstreamStorageData checks upstream's etcd storage-path
// data with every API on, as upstream's own path test runs.
func TestKeysAgreeWithUpstreamStorageData(t *testing.T) {
	w := apiserver.Map(t, everyAPIAndFeature...)
	storageDataAgrees(t, w, etcd.GetEtcdStorageDataForNamespaceServedAt(storageDataNamespace, version.DefaultKubeBinaryVersion, false), minStorageData)
}

// minStorageData is how many built-in entries upstream's storage data has
// at least, on every release: fewer says the data went missing.
const minStorageData = 60

// minorsBack is the minor version n before this build's Kubernetes.
func minorsBack(n uint) string {
	v := utilversion.MustParse(version.DefaultKubeBinaryVersion)
	return fmt.Sprintf("%d.%d", v.Major(), v.Minor()-n)
}

// storageDataAgrees checks every built-in entry of upstream's storage data:
// the key regctl's store computes for the stub object is the
// ExpectedEtcdPath, under the route's key prefix, and the route's storage
// version is the ExpectedGVK's. want is how many built-in entries there
// are at least.
func storageDataAgrees(t *testing.T, w *storagemap.Session, data map[schema.GroupVersionResource]etcd.StorageData, want int) {
	t.Helper()
	preferred := map[string]string{}
	for _, r := range w.Map.Table.Routes {
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
	for gvr, d := range data {
		if crdGroups[gvr.Group] {
			continue
		}
		checked++
		path := kubectlName(gvr.GroupVersion(), preferred[gvr.Group] == gvr.Version, gvr.Resource)
		h, ok := w.Map.Handles[path]
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
			ns = storageDataNamespace
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
	if checked < want {
		t.Errorf("checked %d entries of upstream's data, want every built-in one (%d)", checked, want)
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
