package storagemap

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/cacher"
	"k8s.io/kube-aggregator/pkg/apis/apiregistration"
	aggregatorapiserver "k8s.io/kube-aggregator/pkg/apiserver"
	apiserviceetcd "k8s.io/kube-aggregator/pkg/registry/apiservice/etcd"
	"k8s.io/kubernetes/pkg/registry/core/event"
	eventstorage "k8s.io/kubernetes/pkg/registry/core/event/storage"
	"k8s.io/kubernetes/pkg/registry/core/pod"
	podstorage "k8s.io/kubernetes/pkg/registry/core/pod/storage"

	"github.com/regctl/regctl/internal/etcdview/embedded"
	"github.com/regctl/regctl/internal/gocode"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
	"github.com/regctl/regctl/internal/storagemap/wiring"
	"github.com/regctl/regctl/internal/stores"
)

// described is a path's wiring by step and decision name.
type described map[string]map[string]wiring.Decision

func describe(t *testing.T, w *Session, path string) described {
	t.Helper()
	p, err := w.Map.Describe(path)
	if err != nil {
		t.Fatalf("describing %s: %v", path, err)
	}
	out := described{}
	for _, s := range p.Steps {
		out[s.Step] = map[string]wiring.Decision{}
		for _, d := range s.Decisions {
			out[s.Step][d.Name] = d
		}
	}
	checkLocations(t, path, p)
	return out
}

// want checks one decision: its value when value is set, its code when
// code is.
func (d described) want(t *testing.T, path, step, name, value, code string) {
	t.Helper()
	got, ok := d[step][name]
	switch {
	case !ok:
		t.Errorf("%s: no %q in step %q (%v)", path, name, step, d[step])
	case value != "" && got.Value != value:
		t.Errorf("%s: %s %s = %q, want %q", path, step, name, got.Value, value)
	case code != "" && got.Code != code:
		t.Errorf("%s: %s %s is %q, want %q", path, step, name, got.Code, code)
	}
}

// TestDescribeIsTheServersWiring describes paths of every kind against
// the server's own functions and types: a core resource with a watch
// cache, triggers and indexers; events, with a TTL and no watch cache; a
// subresource with its own strategy; a custom resource with selectable
// fields, as the CRD handler builds it; the aggregator's APIServices.
func TestDescribeIsTheServersWiring(t *testing.T) {
	e, err := embedded.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	w := build(t, "--etcd-servers="+e.ClientURL)
	writeCRDs(t, w, []string{`
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {color: {type: string}}}}}}
    selectableFields: [{jsonPath: .spec.color}]
`}, true)
	// metrics-server's APIService: the aggregator proxies its group.
	apiservice := &apiregistration.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1beta1.metrics.k8s.io"}, Spec: apiregistration.APIServiceSpec{
		Group: "metrics.k8s.io", Version: "v1beta1", GroupPriorityMinimum: 100, VersionPriority: 100, InsecureSkipTLSVerify: true,
		Service: &apiregistration.ServiceReference{Namespace: "kube-system", Name: "metrics-server", Port: 443},
	}}
	target := handle.Target{Handle: w.Map.Handles["apiservices.apiregistration.k8s.io"]}
	if _, err := target.Storage.(rest.Creater).Create(stores.RequestContext(context.Background(), target), apiservice, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	w = build(t, "--etcd-servers="+e.ClientURL)

	metrics, err := w.Map.Describe("v1beta1.metrics.k8s.io")
	if err != nil || len(metrics.Steps) != 2 || metrics.Steps[0].Decisions[len(metrics.Steps[0].Decisions)-1].Value != "kube-system/metrics-server:443" ||
		metrics.Steps[1].Decisions[0].Code != "k8s.io/kube-aggregator/pkg/apiserver.completedConfig.NewWithDelegate" {
		t.Errorf("a proxied APIService: %v, %+v, want its route, where it is proxied to, and the aggregator", err, metrics)
	}

	pods := describe(t, w, "pods")
	pods.want(t, "pods", "storage provider", "provider", "", "k8s.io/kubernetes/pkg/registry/core/rest.(*legacyProvider).NewRESTStorage")
	pods.want(t, "pods", "REST storage", "constructor", "", gocode.Func(podstorage.NewStorage).Name)
	pods.want(t, "pods", "REST storage", "type", gocode.TypeName(&podstorage.REST{}), "")
	pods.want(t, "pods", "genericregistry.Store", "KeyFunc", "/registry/pods/{namespace}/{name}", "")
	pods.want(t, "pods", "genericregistry.Store", "KeyRootFunc", "/registry/pods/{namespace}", "")
	pods.want(t, "pods", "genericregistry.Store", "PredicateFunc", "", gocode.Func(pod.MatchPod).Name)
	pods.want(t, "pods", "genericregistry.Store", "AttrFunc (StoreOptions)", "", gocode.Func(pod.GetAttrs).Name)
	if fields := pods["genericregistry.Store"]["PredicateFunc"].Value; !strings.Contains(fields, "spec.nodeName") || !strings.Contains(fields, "status.phase") {
		t.Errorf("pods: selectable fields %q, want those of pod.GetAttrs", fields)
	}
	strategy := "strategy (create, update, delete, resetFields)"
	pods.want(t, "pods", strategy, "type", gocode.TypeName(pod.Strategy), "")
	if loc, _ := gocode.Method(pod.Strategy, "PrepareForCreate"); pods[strategy]["PrepareForCreate"].Code != loc.Name || !strings.Contains(loc.Name, "podStrategy") {
		t.Errorf("pods: PrepareForCreate %+v, want podStrategy's %v", pods[strategy]["PrepareForCreate"], loc)
	}
	if d := pods["decorator"]["decorator"]; !strings.HasPrefix(d.Value, "cacher: ") || !strings.Contains(d.Code, "StorageWithCacher") {
		t.Errorf("pods: decorator %+v, want the watch cache of StorageWithCacher", d)
	}
	pods.want(t, "pods", "decorator", "watch cache", "", gocode.Func(cacher.NewCacherFromConfig).Name)
	pods.want(t, "pods", "decorator", "trigger spec.nodeName", "", gocode.Func(pod.NodeNameTriggerFunc).Name)
	pods.want(t, "pods", "decorator", "indexer f:spec.nodeName", "", gocode.Func(pod.NodeNameIndexFunc).Name)
	pods.want(t, "pods", "CompleteWithOptions and RESTOptionsGetter", "media type", "application/vnd.kubernetes.protobuf", "")
	pods.want(t, "pods", "CompleteWithOptions and RESTOptionsGetter", "CompleteWithOptions", "", "k8s.io/apiserver/pkg/registry/generic/registry.(*Store).CompleteWithOptions")
	if g := pods["CompleteWithOptions and RESTOptionsGetter"]["RESTOptionsGetter"]; !strings.HasSuffix(g.Code, ".GetRESTOptions") || g.At == "" {
		t.Errorf("pods: the getter %+v, want the server's GetRESTOptions and where it is", g)
	}
	pods.want(t, "pods", "CompleteWithOptions and RESTOptionsGetter", "storage version", "v1", "")
	pods.want(t, "pods", "CompleteWithOptions and RESTOptionsGetter", "transformer reads with", "identity", "")
	pods.want(t, "pods", "subresources", "pods/status", "", "")
	pods.want(t, "pods", "HTTP routes (InstallREST)", "GET /api/v1/namespaces/{namespace}/pods/{name}", "get", "")

	events := describe(t, w, "events")
	events.want(t, "events", "REST storage", "constructor", "", gocode.Func(eventstorage.NewREST).Name)
	if ttl := events["genericregistry.Store"]["TTLFunc"]; gocode.Enclosing(ttl.Code) != gocode.Func(eventstorage.NewREST).Name {
		t.Errorf("events: TTLFunc %+v, want the closure of event's NewREST", ttl)
	}
	events.want(t, "events", "genericregistry.Store", "PredicateFunc", "", gocode.Func(event.Matcher).Name)
	if d := events["decorator"]["decorator"]; d.Value != "undecorated: kube-apiserver's DefaultWatchCacheSizes gives events#0" {
		t.Errorf("events: decorator %+v, want undecorated for kube-apiserver's default size", d)
	}
	if _, ok := events["decorator"]["watch cache"]; ok {
		t.Error("events: a watch cache is described")
	}
	if _, ok := pods["genericregistry.Store"]["TTLFunc"]; ok {
		t.Error("pods: a TTLFunc is described")
	}

	status := describe(t, w, "pods/status")
	status.want(t, "pods/status", "path", "store", "shared, with pods", "")
	status.want(t, "pods/status", "strategy (update, resetFields)", "type", gocode.TypeName(pod.StatusStrategy), "")
	status.want(t, "pods/status", "strategy (create, delete)", "type", gocode.TypeName(pod.Strategy), "")
	status.want(t, "pods/status", "HTTP routes (InstallREST)", "PUT /api/v1/namespaces/{namespace}/pods/{name}/status", "put", "")

	widgets := describe(t, w, "widgets.example.com")
	widgets.want(t, "widgets.example.com", "storage provider", "provider", "", gocode.Func(apiextensionsapiserver.NewCustomResourceDefinitionHandler).Name)
	if c := widgets["REST storage"]["constructor"]; !strings.HasPrefix(c.Code, "k8s.io/apiextensions-apiserver/pkg/registry/customresource.") {
		t.Errorf("widgets: constructor %+v, want customresource's", c)
	}
	if fields := widgets["genericregistry.Store"]["PredicateFunc"].Value; !strings.Contains(fields, "spec.color") {
		t.Errorf("widgets: selectable fields %q, want the CRD's spec.color", fields)
	}
	widgets.want(t, "widgets.example.com", "genericregistry.Store", "KeyFunc", "/registry/example.com/widgets/{namespace}/{name}", "")
	// The CRD handler's strategy is a struct value, one for every role;
	// its matcher a method value, located at the method.
	if _, ok := widgets["strategy (create, update, delete, resetFields)"]; !ok {
		t.Errorf("widgets: the strategy's roles are not one step: %v", widgets)
	}
	if p := widgets["genericregistry.Store"]["PredicateFunc"]; !strings.HasSuffix(p.Code, ".MatchCustomResourceDefinitionStorage") || p.At == "" {
		t.Errorf("widgets: PredicateFunc %+v, want the strategy's method and where it is", p)
	}
	if _, ok := widgets["HTTP routes (InstallREST)"]; ok {
		t.Error("widgets: the CRD handler serves custom resources, the installer gives them no routes")
	}
	wired := w.Map.Wired().Routes
	if !slices.Contains(wired[slices.IndexFunc(wired, func(r routetable.Route) bool { return r.Path == "widgets.example.com" })].SelectableFields, "spec.color") {
		t.Error("widgets: the route table's selectable fields lack the CRD's spec.color")
	}

	apiservices := describe(t, w, "apiservices.apiregistration.k8s.io")
	apiservices.want(t, "apiservices", "storage provider", "provider", gocode.TypeName(aggregatorapiserver.CompletedConfig{}), "")
	apiservices.want(t, "apiservices", "REST storage", "constructor", "", gocode.Func(apiserviceetcd.NewREST).Name)
	apiservices.want(t, "apiservices", "genericregistry.Store", "KeyFunc", "/registry/apiregistration.k8s.io/apiservices/{name}", "")

	crds := describe(t, w, "customresourcedefinitions.apiextensions.k8s.io")
	crds.want(t, "crds", "storage provider", "provider", gocode.TypeName(apiextensionsapiserver.CompletedConfig{}), "")
}

// checkLocations checks that each file:line of p is the line that
// declares the function it names, in the source the test was built from.
func checkLocations(t *testing.T, path string, p wiring.Path) {
	t.Helper()
	checked := 0
	for _, s := range p.Steps {
		for _, d := range s.Decisions {
			if d.At == "" {
				continue
			}
			file, lineText := sourceLine(t, d.At)
			name := d.Code[strings.LastIndex(d.Code, ".")+1:]
			want := regexp.MustCompile(`\bfunc\b.*\b` + regexp.QuoteMeta(name) + `\b`)
			if strings.HasPrefix(name, "func") || isDigits(name) {
				// A closure: its line opens a function literal.
				want = regexp.MustCompile(`\bfunc\(`)
			}
			if !want.MatchString(lineText) {
				t.Errorf("%s: %s %s at %s (%s): line %q does not declare it", path, s.Step, d.Name, d.At, file, lineText)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Errorf("%s: no location", path)
	}
}

func isDigits(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

// sourceLine reads file:line, a file named as in the Kubernetes tree
// (gocode.Source), from the module cache the test was built from.
func sourceLine(t *testing.T, at string) (string, string) {
	t.Helper()
	i := strings.LastIndex(at, ":")
	line, err := strconv.Atoi(at[i+1:])
	if err != nil {
		t.Fatalf("%s: no line", at)
	}
	file := moduleFile(t, at[:i])
	f, err := os.Open(file)
	if err != nil {
		t.Fatalf("%s: %v", at, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		if n == line {
			return file, sc.Text()
		}
	}
	t.Fatalf("%s: %s has fewer lines", at, file)
	return "", ""
}

// moduleFile is where a file named as gocode.Source names it is: in the
// module cache, at the release this test is built with.
func moduleFile(t *testing.T, name string) string {
	t.Helper()
	kube := serverflags.KubernetesVersion()
	switch {
	case strings.HasPrefix(name, "staging/src/"):
		parts := strings.SplitN(strings.TrimPrefix(name, "staging/src/"), "/", 3)
		return filepath.Join(modCache(t), parts[0]+"/"+parts[1]+"@v0."+strings.TrimPrefix(kube, "v1."), parts[2])
	case strings.HasPrefix(name, "github.com/regctl/regctl/"):
		return filepath.Join("../..", strings.TrimPrefix(name, "github.com/regctl/regctl/"))
	}
	return filepath.Join(modCache(t), "k8s.io/kubernetes@"+kube, name)
}

var modCacheDir = sync.OnceValues(func() ([]byte, error) { return exec.Command("go", "env", "GOMODCACHE").Output() })

func modCache(t *testing.T) string {
	t.Helper()
	out, err := modCacheDir()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	return strings.TrimSpace(string(out))
}
