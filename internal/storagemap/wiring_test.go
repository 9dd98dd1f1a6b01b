package storagemap

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/etcdview/embedded"
	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
)

// build parses args as kube-apiserver flags and builds the map.
func build(t *testing.T, args ...string) *Session {
	t.Helper()
	w, err := buildErr(t, args...)
	if err != nil {
		t.Fatalf("building with %v: %v", args, err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func buildErr(t *testing.T, args ...string) (*Session, error) {
	t.Helper()
	opts := serverflags.NewOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	opts.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parsing %v: %v", args, err)
	}
	return Open(context.Background(), Config{Options: opts, Timeout: 5 * time.Second})
}

// buildConfig builds a default map with cfg's other fields.
func buildConfig(t *testing.T, cfg Config) *Session {
	t.Helper()
	cfg.Options, cfg.Timeout = serverflags.NewOptions(), 5*time.Second
	w, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func routeMap(w *Session) map[string]routetable.Route {
	m := map[string]routetable.Route{}
	for _, r := range w.Map.Table.Routes {
		m[r.Path] = r
	}
	return m
}

// TestRoutesFollowTheServersGroupOrder checks the map is in the order
// kube-apiserver installs it: its storage providers' order (groups disabled
// by default left out), versions by priority, paths sorted within a version.
// Which paths there are is checked against a real server's discovery in
// test/agreement.
func TestRoutesFollowTheServersGroupOrder(t *testing.T) {
	w := build(t)
	var groups []string
	lastGV, lastPath := "", ""
	for _, r := range w.Map.Table.Routes {
		gv := r.Group + "/" + r.Version
		if len(groups) == 0 || groups[len(groups)-1] != r.Group {
			groups = append(groups, r.Group)
		} else if gv == lastGV && r.Path <= lastPath {
			t.Errorf("paths of %s not sorted at %q, %q", gv, lastPath, r.Path)
		}
		lastGV, lastPath = gv, r.Path
	}
	// The apiextensions and aggregator servers come after kube-apiserver's
	// own groups.
	want := defaultGroups
	if strings.Join(groups, ",") != strings.Join(want, ",") {
		t.Errorf("groups in the order\n%q\nwant the server's provider order, then the chain's\n%q", groups, want)
	}
	if i := slices.IndexFunc(w.Map.Table.Routes, func(r routetable.Route) bool { return r.Path == "horizontalpodautoscalers.autoscaling" }); i < 0 ||
		w.Map.Table.Routes[i].Version != "v2" {
		t.Errorf("autoscaling's preferred version is not v2 first")
	}
	if len(w.Map.Handles) != len(w.Map.Table.Routes) {
		t.Fatalf("got %d handles for %d routes, want one per path", len(w.Map.Handles), len(w.Map.Table.Routes))
	}
	for _, r := range w.Map.Table.Routes {
		if h := w.Map.Handles[r.Path]; h == nil || h.Route.Path != r.Path {
			t.Errorf("%s: no handle", r.Path)
		}
	}
	if w.Map.Table.KubernetesVersion != releaseVersion {
		t.Errorf("kubernetesVersion = %q, want %s", w.Map.Table.KubernetesVersion, releaseVersion)
	}
	if w.Map.Table.EtcdPrefix != "/registry" {
		t.Errorf("etcdPrefix = %q, want /registry", w.Map.Table.EtcdPrefix)
	}
}

func TestDecorators(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		want  func(path string) string
		check []string
	}{
		{
			name: "default: events uncached, every other store cached",
			want: func(p string) string {
				if p == "events" || p == "events.events.k8s.io" {
					return routetable.DecoratorUndecorated
				}
				return routetable.DecoratorCacher
			},
		},
		{
			name: "--watch-cache=false",
			args: []string{"--watch-cache=false"},
			want: func(string) string { return routetable.DecoratorUndecorated },
		},
		{
			name: "--watch-cache-sizes=secrets#0",
			args: []string{"--watch-cache-sizes=secrets#0"},
			want: func(p string) string {
				if p == "events" || p == "events.events.k8s.io" || p == "secrets" {
					return routetable.DecoratorUndecorated
				}
				return routetable.DecoratorCacher
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := build(t, tc.args...)
			owned := 0
			for _, r := range w.Map.Table.Routes {
				switch r.Store {
				case routetable.StoreOwn:
					owned++
					if want := tc.want(r.Path); r.Decorator != want {
						t.Errorf("%s: decorator %q, want %q", r.Path, r.Decorator, want)
					}
				case routetable.StoreShared:
					if want := tc.want(r.SharesWith); r.Decorator != want {
						t.Errorf("%s (shares %s): decorator %q, want %q", r.Path, r.SharesWith, r.Decorator, want)
					}
				case routetable.StoreNone:
					if r.Decorator != routetable.DecoratorNone {
						t.Errorf("%s: decorator %q, want none", r.Path, r.Decorator)
					}
				}
			}
			if owned != storedPaths {
				t.Errorf("%d paths own a store, want the %d resource versions with storage of a default server (CRDs and APIServices included)", owned, storedPaths)
			}
		})
	}
}

func TestStoreSharing(t *testing.T) {
	routes := routeMap(build(t))
	for path, want := range map[string]string{
		"pods/status":                  "pods",
		"pods/binding":                 "pods",
		"pods/log":                     "pods",
		"bindings":                     "pods",
		"serviceaccounts/token":        "serviceaccounts",
		"namespaces/finalize":          "namespaces",
		"services/proxy":               "services",
		"replicationcontrollers/scale": "replicationcontrollers",
	} {
		r := routes[path]
		if r.Store != routetable.StoreShared || r.SharesWith != want {
			t.Errorf("%s: store %q sharesWith %q, want shared with %q", path, r.Store, r.SharesWith, want)
		}
		if r.KeyPrefix != routes[want].KeyPrefix || r.KeyPrefix == "" {
			t.Errorf("%s: keyPrefix %q, want %s's %q", path, r.KeyPrefix, want, routes[want].KeyPrefix)
		}
	}
	for _, path := range []string{"pods", "services", "namespaces", "events", "nodes"} {
		if r := routes[path]; r.Store != routetable.StoreOwn || r.SharesWith != "" {
			t.Errorf("%s: store %q sharesWith %q, want own", path, r.Store, r.SharesWith)
		}
	}
	cs := routes["componentstatuses"]
	if cs.Store != routetable.StoreNone || cs.KeyPrefix != "" || cs.Decorator != routetable.DecoratorNone || cs.StorageVersion != "" {
		t.Errorf("componentstatuses = %+v, want store none with no prefix, decorator or storage version", cs)
	}
}

func TestStorageDecisionsFollowFlags(t *testing.T) {
	routes := routeMap(build(t, "--etcd-prefix=/custom", "--storage-media-type=application/json"))
	pods := routes["pods"]
	if pods.KeyPrefix != "/custom/pods/" {
		t.Errorf("pods keyPrefix = %q, want /custom/pods/", pods.KeyPrefix)
	}
	if pods.MediaType != "application/json" {
		t.Errorf("pods mediaType = %q, want application/json", pods.MediaType)
	}
	defaults := routeMap(build(t))
	if got := defaults["pods"].MediaType; got != "application/vnd.kubernetes.protobuf" {
		t.Errorf("default pods mediaType = %q, want protobuf", got)
	}
	if got := defaults["pods"].Encryption; got != "identity" {
		t.Errorf("default pods encryption = %q, want identity", got)
	}
}

func TestEphemeralEtcdNeverAppears(t *testing.T) {
	w := build(t)
	if w.Embedded == nil {
		t.Fatal("no --etcd-servers: want an embedded etcd")
	}
	for _, r := range w.Map.Table.Routes {
		if len(r.EtcdServers) != 0 {
			t.Fatalf("%s: etcdServers %v, want none for the ephemeral etcd", r.Path, r.EtcdServers)
		}
	}
}

// liveEtcd starts an embedded etcd and a client of it, both stopped when
// the test ends.
func liveEtcd(t *testing.T) (*embedded.Etcd, *clientv3.Client) {
	t.Helper()
	e, err := embedded.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{e.ClientURL}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return e, client
}

func TestBuildAgainstRealEtcdLeavesRevisionUnchanged(t *testing.T) {
	e, client := liveEtcd(t)
	ctx := context.Background()
	if _, err := client.Put(ctx, "/registry/namespaces/default", "x"); err != nil {
		t.Fatal(err)
	}
	before, err := etcdview.Revision(ctx, client)
	if err != nil {
		t.Fatal(err)
	}

	w := build(t, "--etcd-servers="+e.ClientURL)
	if w.Embedded != nil {
		t.Fatal("--etcd-servers given: want no embedded etcd")
	}
	// Only a resource moved by --etcd-servers-overrides names its servers:
	// a table does not depend on where a cluster's etcd is.
	if got := routeMap(w)["pods"].EtcdServers; len(got) != 0 {
		t.Errorf("pods etcdServers = %v, want none", got)
	}
	w.Close()

	after, err := etcdview.Revision(ctx, client)
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("etcd revision moved from %d to %d: building the map wrote to etcd", before, after)
	}
	leases, err := client.Leases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(leases.Leases) != 0 {
		t.Fatalf("building the map granted %d leases", len(leases.Leases))
	}
}

func TestUnreachableEtcdFailsFast(t *testing.T) {
	start := time.Now()
	opts := serverflags.NewOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	opts.AddFlags(fs)
	// Port 1 on loopback: nothing listens there.
	if err := fs.Parse([]string{"--etcd-servers=http://127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), Config{Options: opts, Timeout: time.Second})
	if err == nil {
		t.Fatal("want an error for an unreachable etcd")
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %s to fail: the server's 20s dial timeout leaked through", took)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "127.0.0.1:1") || !strings.Contains(msg, "--etcd-servers") {
		t.Errorf("error %q: want one line naming the server and the flag", msg)
	}
}

func TestResolveNamesAsKubectlDoes(t *testing.T) {
	w := build(t)
	for name, want := range map[string]string{
		"pods": "pods", "pod": "pods", "Pod": "pods", "PODS": "pods", "po": "pods",
		"svc": "services", "cm": "configmaps", "ns": "namespaces", "no": "nodes",
		"pv": "persistentvolumes", "pvc": "persistentvolumeclaims", "ev": "events",
		"ep": "endpoints", "rc": "replicationcontrollers", "sa": "serviceaccounts",
		"quota": "resourcequotas", "limits": "limitranges", "cs": "componentstatuses",
		"Secret": "secrets", "podtemplate": "podtemplates",
		"pods.v1.": "pods", "svc.v1.": "services", "pod.": "pods",
		// Groups, as kubectl names them: the preferred version unless one
		// is named, core first when a name is in two groups.
		"deployments": "deployments.apps", "deploy": "deployments.apps", "Deployment": "deployments.apps",
		"deployments.apps": "deployments.apps", "deployments.v1.apps": "deployments.apps",
		"events": "events", "events.events.k8s.io": "events.events.k8s.io",
		"hpa": "horizontalpodautoscalers.autoscaling", "horizontalpodautoscalers.v1.autoscaling": "horizontalpodautoscalers.v1.autoscaling",
		"cj": "cronjobs.batch", "leases": "leases.coordination.k8s.io", "netpol": "networkpolicies.networking.k8s.io",
		"clusterrole": "clusterroles.rbac.authorization.k8s.io", "pc": "priorityclasses.scheduling.k8s.io",
	} {
		got, err := w.Map.Resolve(name)
		if err != nil || got.Path != want {
			t.Errorf("Resolve(%q) = %v, %v; want %q", name, got, err, want)
		}
	}
	if _, err := w.Map.Resolve("deployments.v1beta1.apps"); err == nil || !strings.Contains(err.Error(), `unknown resource "deployments.v1beta1.apps"`) {
		t.Errorf("Resolve(deployments.v1beta1.apps) error %v", err)
	}
	if _, err := w.Map.Resolve("secrte"); err == nil || !strings.Contains(err.Error(), "did you mean secrets?") {
		t.Errorf("Resolve(secrte) error %v: want a suggestion", err)
	}
	// A short name a typo away, and a name started, are suggested too;
	// each resource once.
	if _, err := w.Map.Resolve("deplo"); err == nil || !strings.Contains(err.Error(), "did you mean deployments?") {
		t.Errorf("Resolve(deplo) error %v: want deployments, once", err)
	}
	if _, err := w.Map.Resolve("cssr"); err == nil || !strings.Contains(err.Error(), "certificatesigningrequests") {
		t.Errorf("Resolve(cssr) error %v: want certificatesigningrequests, whose short name is csr", err)
	}
}

func TestResolveListExpandsCategoriesAsKubectlDoes(t *testing.T) {
	w := build(t)
	for list, want := range map[string]string{
		// Groups in the order of the server's discovery, by their
		// priorities (TestGetAllAgreesWithKubectl holds it to the server's).
		"all":                "pods,replicationcontrollers,services,daemonsets.apps,deployments.apps,replicasets.apps,statefulsets.apps,horizontalpodautoscalers.autoscaling,cronjobs.batch,jobs.batch",
		"pods,svc,po":        "pods,services",
		"cm,svc,all":         "configmaps,services,pods,replicationcontrollers,daemonsets.apps,deployments.apps,replicasets.apps,statefulsets.apps,horizontalpodautoscalers.autoscaling,cronjobs.batch,jobs.batch",
		"Pod,ServiceAccount": "pods,serviceaccounts",
	} {
		handles, err := w.Map.ResolveList(list)
		if err != nil {
			t.Errorf("ResolveList(%q): %v", list, err)
			continue
		}
		var got []string
		for _, h := range handles {
			got = append(got, h.Path)
		}
		if strings.Join(got, ",") != want {
			t.Errorf("ResolveList(%q) = %v, want %s", list, got, want)
		}
	}
	for _, bad := range []string{"pods,", "pods,widgets"} {
		if _, err := w.Map.ResolveList(bad); err == nil {
			t.Errorf("ResolveList(%q): want an error", bad)
		}
	}
}

// Each handle carries the client of its own servers: an overridden resource
// and its subresources on theirs, every other path on --etcd-servers.
func TestHandlesCarryTheClientOfTheirOwnServers(t *testing.T) {
	var urls []string
	for range 2 {
		e, err := embedded.Start(nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		urls = append(urls, e.ClientURL)
	}
	main, second := urls[0], urls[1]
	w := build(t, "--etcd-servers="+main, "--etcd-servers-overrides=/events#"+second)
	for path, want := range map[string]string{"events": second, "pods": main, "pods/status": main, "namespaces": main} {
		c, err := w.Map.Handles[path].Client(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if got := c.Endpoints(); len(got) != 1 || got[0] != want {
			t.Errorf("%s: client on %v, want %s", path, got, want)
		}
	}
	if _, err := w.Map.Handles["componentstatuses"].Client(context.Background()); err == nil {
		t.Error("componentstatuses: a path that reaches no store has no etcd client")
	}
}

// TestNamesAreTheInstallersOwn holds what name resolution reads from the
// storage without installing it to the discovery the installer serves, for
// every path, with every API on.
func TestNamesAreTheInstallersOwn(t *testing.T) {
	for _, args := range [][]string{nil, {"--runtime-config=api/all=true"}} {
		w := build(t, args...)
		paths := 0
		for _, v := range w.Map.versions {
			installed := map[string]metav1.APIResource{}
			for _, r := range v.Resources {
				installed[r.Name] = r
			}
			if len(v.Names) != len(installed) {
				t.Errorf("%s: %d names, the installer discovers %d", v.GV, len(v.Names), len(installed))
			}
			for _, n := range v.Names {
				paths++
				r := installed[n.Name]
				r.Verbs, r.StorageVersionHash = nil, ""
				if !reflect.DeepEqual(n, r) {
					t.Errorf("%s %s: names\n%+v\nthe installer\n%+v", v.GV, n.Name, n, r)
				}
			}
		}
		if paths < 100 {
			t.Errorf("%v: compared %d paths", args, paths)
		}
	}
}

// TestOnlyInstallsWhatACommandNeeds checks that a map built for a few
// resources installs just their versions, and resolves them as the full
// map does.
func TestOnlyInstallsWhatACommandNeeds(t *testing.T) {
	for only, want := range map[string][]string{
		"pods":       {"v1"},
		"deploy,hpa": {"autoscaling/v2", "apps/v1"},
		"horizontalpodautoscalers.v1.autoscaling": {"autoscaling/v1"},
		"all": {"v1", "autoscaling/v2", "batch/v1", "apps/v1"},
	} {
		w := buildConfig(t, Config{Only: only})
		var got []string
		for _, r := range w.Map.Table.Routes {
			if !slices.Contains(got, r.APIVersion()) {
				got = append(got, r.APIVersion())
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("Only %q installs %v, want %v", only, got, want)
		}
		handles, err := w.Map.ResolveList(only)
		if err != nil || len(handles) == 0 {
			t.Errorf("Only %q: resolving it: %v", only, err)
		}
		for _, h := range handles {
			if h.Route.Path != h.Path || len(h.Route.Verbs) == 0 {
				t.Errorf("Only %q: %s has no route of its own", only, h.Path)
			}
		}
	}
	// Of a version, only the resources named, with their subresources.
	w := buildConfig(t, Config{Only: "pods"})
	for _, r := range w.Map.Table.Routes {
		if r.Resource != "pods" {
			t.Errorf("Only pods installs %s", r.Path)
		}
	}
	if _, err := w.Map.Subresource(w.Map.Handles["pods"], "status"); err != nil || len(w.Map.Table.Routes) != 11 {
		t.Errorf("Only pods: %d routes, pods/status: %v; want pods and its 10 subresources", len(w.Map.Table.Routes), err)
	}
	// A name that resolves to nothing builds the whole map, for the error
	// and its suggestions.
	w = buildConfig(t, Config{Only: "podz"})
	if len(w.Map.Table.Routes) < 100 {
		t.Errorf("Only podz: %d routes, want the whole map", len(w.Map.Table.Routes))
	}
	if _, err := w.Map.Resolve("podz"); err == nil || !strings.Contains(err.Error(), "did you mean pods?") {
		t.Errorf("Resolve(podz): %v", err)
	}
}
