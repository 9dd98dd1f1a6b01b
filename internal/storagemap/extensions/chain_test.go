package extensions

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/endpoints/discovery"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/utils/ptr"

	"github.com/regctl/regctl/internal/etcdview/embedded"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/storagemap/reach"
	"github.com/regctl/regctl/internal/storagemap/restoptions"
	"github.com/regctl/regctl/internal/storagemap/served"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
)

// etcdChain is the rest of a default kube-apiserver's chain on an
// embedded etcd of its own, and a client of that etcd.
func etcdChain(t *testing.T) (Chain, *clientv3.Client) {
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
	opts := serverflags.NewOptions()
	etcd := *opts.Server.Etcd
	etcd.StorageConfig.Transport.ServerList = []string{e.ClientURL}
	getter := &restoptions.Getter{MainServers: etcd.StorageConfig.Transport.ServerList, Timeout: 10 * time.Second,
		Encryption: func(schema.GroupResource) string { return "identity" }}
	return Chain{Server: opts.Server, Etcd: etcd, Getter: getter, Models: &served.Models{}, NotEstablished: map[schema.GroupVersionKind]string{},
		Client: func(context.Context) (*clientv3.Client, error) { return client, nil }}, client
}

// put stores obj as JSON, as the apiextensions and aggregator servers
// store their objects, under the key the store of path among versions
// gives it; it returns the revision of the write.
func put(t *testing.T, c Chain, client *clientv3.Client, versions []served.Version, path string, obj metav1.Object) int64 {
	t.Helper()
	var store *reach.Path
	for _, v := range versions {
		if r, ok := reach.Of(v.Stores)[path]; ok {
			store = &r
		}
	}
	if store == nil || store.Store == nil {
		t.Fatalf("no store of %s", path)
	}
	key, err := store.Store.KeyFunc(genericapirequest.NewContext(), obj.GetName())
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Put(context.Background(), joinKey(c.Etcd.StorageConfig.Prefix, key), string(data))
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

func joinKey(prefix, key string) string { return path.Join("/", prefix, key) }

// destroyed destroys the stores of versions when the test ends, before
// their etcd stops.
func destroyed(t *testing.T, versions ...served.Version) {
	t.Cleanup(func() {
		for _, v := range versions {
			for p, s := range v.Stores {
				if !strings.Contains(p, "/") {
					s.Destroy()
				}
			}
		}
	})
}

func crdVersion(name string, storage bool) apiextensionsv1.CustomResourceDefinitionVersion {
	return apiextensionsv1.CustomResourceDefinitionVersion{Name: name, Served: true, Storage: storage,
		Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}}}
}

// crd is a CRD as a server stores it once its controllers accepted its
// names and, when established, established it.
func crd(plural, group, kind string, scope apiextensionsv1.ResourceScope, established bool, versions ...apiextensionsv1.CustomResourceDefinitionVersion) *apiextensionsv1.CustomResourceDefinition {
	names := apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: strings.ToLower(kind), Kind: kind, ListKind: kind + "List"}
	conditions := []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue}}
	if established {
		conditions = append(conditions, apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue})
	}
	c := &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group, UID: types.UID("uid-" + plural + "." + group), Generation: 1},
		Spec:       apiextensionsv1.CustomResourceDefinitionSpec{Group: group, Names: names, Scope: scope, Versions: versions},
		Status:     apiextensionsv1.CustomResourceDefinitionStatus{AcceptedNames: names, Conditions: conditions},
	}
	for _, v := range versions {
		if v.Storage {
			c.Status.StoredVersions = []string{v.Name}
		}
	}
	return c
}

// widgets serve v1, stored, with status and scale, and v1beta1,
// deprecated.
func widgets() *apiextensionsv1.CustomResourceDefinition {
	v1, v1beta1 := crdVersion("v1", true), crdVersion("v1beta1", false)
	v1.Subresources = &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
		Scale: &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"}}
	v1beta1.Deprecated, v1beta1.DeprecationWarning = true, ptr.To("example.com/v1beta1 Widget is going away")
	c := crd("widgets", "example.com", "Widget", apiextensionsv1.NamespaceScoped, true, v1, v1beta1)
	c.Spec.Names.ShortNames, c.Spec.Names.Categories = []string{"wd"}, []string{"all"}
	c.Status.AcceptedNames = c.Spec.Names
	return c
}

func versionOf(versions []served.Version, gv string) *served.Version {
	for i := range versions {
		if versions[i].GV.String() == gv {
			return &versions[i]
		}
	}
	return nil
}

// TestTheChainServesTheCRDsAndAPIServicesInEtcd: custom resources come
// from the established CRDs alone (read in pages), in one version of the
// map per group version, preferred first, with the discovery the
// apiextensions server serves and the storage decisions of its getter;
// the others are told apart by the kinds they would serve; an APIService
// backed by a service is a route proxied to it.
func TestTheChainServesTheCRDsAndAPIServicesInEtcd(t *testing.T) {
	c, client := etcdChain(t)
	ctx := context.Background()
	builtIn, err := c.versions()
	if err != nil {
		t.Fatal(err)
	}
	destroyed(t, builtIn...)
	put(t, c, client, builtIn, "customresourcedefinitions", widgets())
	put(t, c, client, builtIn, "customresourcedefinitions", crd("gadgets", "example.com", "Gadget", apiextensionsv1.ClusterScoped, true, crdVersion("v1", true)))
	put(t, c, client, builtIn, "customresourcedefinitions", crd("pendings", "example.com", "Pending", apiextensionsv1.NamespaceScoped, false, crdVersion("v1", true)))
	// More than a page of CRDs.
	for i := range crdPage + 1 {
		put(t, c, client, builtIn, "customresourcedefinitions", crd(fmt.Sprintf("things%d", i), "bulk.io", fmt.Sprintf("Thing%d", i), apiextensionsv1.NamespaceScoped, true, crdVersion("v1", true)))
	}
	for _, s := range []*apiregistrationv1.APIService{
		{ObjectMeta: metav1.ObjectMeta{Name: "v1beta1.metrics.k8s.io"}, Spec: apiregistrationv1.APIServiceSpec{Group: "metrics.k8s.io", Version: "v1beta1",
			Service: &apiregistrationv1.ServiceReference{Namespace: "kube-system", Name: "metrics-server", Port: ptr.To[int32](443)}, GroupPriorityMinimum: 100, VersionPriority: 100}},
		{ObjectMeta: metav1.ObjectMeta{Name: "v1.apps"}, Spec: apiregistrationv1.APIServiceSpec{Group: "apps", Version: "v1", GroupPriorityMinimum: 17800, VersionPriority: 15}},
	} {
		s.TypeMeta = metav1.TypeMeta{APIVersion: "apiregistration.k8s.io/v1", Kind: "APIService"}
		put(t, c, client, builtIn, "apiservices", s)
	}

	all, proxied, serving, err := c.Extend(ctx, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	destroyed(t, all...)
	var gvs []string
	for _, v := range all[len(builtIn):] {
		gvs = append(gvs, fmt.Sprintf("%s %v", v.GV, v.Preferred))
	}
	if want := []string{"bulk.io/v1 true", "example.com/v1 true", "example.com/v1beta1 false"}; !slices.Equal(gvs, want) {
		t.Fatalf("custom resource versions %v, want %v", gvs, want)
	}
	if bulk := versionOf(all, "bulk.io/v1"); len(bulk.Names) != crdPage+1 {
		t.Errorf("bulk.io/v1 has %d resources, want every CRD of every page", len(bulk.Names))
	}
	if got := c.NotEstablished[schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Pending"}]; got != "pendings.example.com" || len(c.NotEstablished) != 1 {
		t.Errorf("not established: %v", c.NotEstablished)
	}

	v1 := versionOf(all, "example.com/v1")
	var names []string
	for _, r := range v1.Names {
		names = append(names, r.Name)
	}
	if !slices.Equal(names, []string{"gadgets", "widgets", "widgets/status", "widgets/scale"}) {
		t.Errorf("example.com/v1 serves %v", names)
	}
	w := v1.Names[1]
	if w.Kind != "Widget" || w.SingularName != "widget" || !w.Namespaced || !slices.Equal(w.ShortNames, []string{"wd"}) || !slices.Equal(w.Categories, []string{"all"}) ||
		len(w.Verbs) != 8 || w.StorageVersionHash != discovery.StorageVersionHash("example.com", "v1", "Widget") {
		t.Errorf("widgets' discovery: %+v", w)
	}
	if scale := v1.Names[3]; scale.Group != "autoscaling" || scale.Kind != "Scale" {
		t.Errorf("widgets/scale: %+v", scale)
	}
	if g := v1.Names[0]; g.Namespaced {
		t.Errorf("gadgets are cluster-scoped: %+v", g)
	}
	if v1.CRDs["widgets/status"] != "widgets.example.com" || v1.CRDs["gadgets"] != "gadgets.example.com" {
		t.Errorf("the CRDs of the paths: %v", v1.CRDs)
	}
	// The route table names the server's storage, not regctl's adapter.
	if got := served.TypeName(v1.Stores["widgets/status"]); got != "*k8s.io/apiextensions-apiserver/pkg/registry/customresource.StatusREST" {
		t.Errorf("widgets/status' storage is named %s", got)
	}
	d, ok := c.Getter.Decision(schema.GroupResource{Group: "example.com", Resource: "widgets"})
	if !ok || d.StorageVersion != "example.com/v1" || d.MediaType != "application/json" || d.ResourcePrefix != "example.com/widgets" {
		t.Errorf("widgets' storage decision: %+v", d)
	}

	if len(proxied) != 1 || proxied[0].Path != "v1beta1.metrics.k8s.io" || proxied[0].ProxiedTo != "kube-system/metrics-server:443" || proxied[0].Store != routetable.StoreNone {
		t.Errorf("proxied routes %+v, want metrics-server's alone", proxied)
	}
	if serving == nil || len(serving.Built()) != 0 {
		t.Errorf("serving built before any command asked: %v", serving)
	}
}

// TestACommandReadsTheCRDsItNames: named CRDs are read alone, and only
// when each is established; the CRDs of a group are found by their keys.
func TestACommandReadsTheCRDsItNames(t *testing.T) {
	c, client := etcdChain(t)
	builtIn, err := c.versions()
	if err != nil {
		t.Fatal(err)
	}
	destroyed(t, builtIn...)
	put(t, c, client, builtIn, "customresourcedefinitions", widgets())
	put(t, c, client, builtIn, "customresourcedefinitions", crd("pendings", "example.com", "Pending", apiextensionsv1.NamespaceScoped, false, crdVersion("v1", true)))
	put(t, c, client, builtIn, "customresourcedefinitions", crd("things", "other.io", "Thing", apiextensionsv1.NamespaceScoped, true, crdVersion("v1", true)))
	read := func(c Chain) ([]string, error) {
		crds, err := c.readCRDs(context.Background(), builtIn, func(*apiextensionsv1.CustomResourceDefinition) {})
		var out []string
		for _, crd := range crds {
			out = append(out, crd.Name)
		}
		return out, err
	}
	for _, tc := range []struct {
		names, groups []string
		want          []string
		err           error
	}{
		{names: []string{"widgets.example.com"}, want: []string{"widgets.example.com"}},
		{names: []string{"widgets.example.com", "pendings.example.com"}, err: ErrUndecided},
		{names: []string{"none.example.com"}, err: ErrUndecided},
		{groups: []string{"other.io"}, want: []string{"things.other.io"}},
		{groups: []string{"example.com"}, want: []string{"widgets.example.com"}},
	} {
		c.CRDNames, c.CRDGroups = tc.names, tc.groups
		got, err := read(c)
		if err != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("names %v, groups %v: %v (%v), want %v (%v)", tc.names, tc.groups, got, err, tc.want, tc.err)
		}
	}
}

// TestServingACRDIsTheHandlersOwn: serving a CRD builds, with the CRD
// handler, every served version's storage, codecs, field managers and
// warnings; its handle writes to the key its store names and reads in
// each version; the CRD is read as etcd held it at a revision when asked.
func TestServingACRDIsTheHandlersOwn(t *testing.T) {
	c, client := etcdChain(t)
	ctx := context.Background()
	builtIn, err := c.versions()
	if err != nil {
		t.Fatal(err)
	}
	destroyed(t, builtIn...)
	before := put(t, c, client, builtIn, "customresourcedefinitions", widgets())
	changed := widgets()
	changed.Spec.Names.ShortNames = []string{"wdg"}
	put(t, c, client, builtIn, "customresourcedefinitions", changed)
	if old, err := readCRD(ctx, builtIn, "widgets.example.com", before); err != nil || !slices.Equal(old.Spec.Names.ShortNames, []string{"wd"}) {
		t.Errorf("the CRD at revision %d: %v (%v)", before, old, err)
	}
	if now, err := readCRD(ctx, builtIn, "widgets.example.com", 0); err != nil || !slices.Equal(now.Spec.Names.ShortNames, []string{"wdg"}) {
		t.Errorf("the CRD now: %v (%v)", now, err)
	}

	all, _, serving, err := c.Extend(ctx, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	destroyed(t, all...)
	versions, err := serving.Build("widgets.example.com")
	if err != nil {
		t.Fatal(err)
	}
	destroyed(t, versions["v1"], versions["v1beta1"])
	v1, v1beta1 := versions["v1"], versions["v1beta1"]
	if len(v1.Stores) != 3 || v1.Codecs["widgets/status"].Serializer == nil || v1.FieldManagers["widgets/scale"] == nil || v1.Warnings["widgets"] != nil {
		t.Errorf("v1: stores %v, codecs %v, field managers %v, warnings %v", v1.Stores, v1.Codecs, v1.FieldManagers, v1.Warnings)
	}
	if !slices.Equal(v1beta1.Warnings["widgets"], []string{"example.com/v1beta1 Widget is going away"}) {
		t.Errorf("v1beta1 warns %v, want its deprecation", v1beta1.Warnings)
	}
	if !slices.Equal(serving.Built(), []string{"widgets.example.com"}) || serving.Handler("widgets.example.com") == nil {
		t.Errorf("built %v; a handler: %v", serving.Built(), serving.Handler("widgets.example.com") != nil)
	}

	route := &handle.Handle{Path: "widgets.example.com", Route: routetable.Route{Path: "widgets.example.com", Resource: "widgets", Group: "example.com", Version: "v1"}}
	h, err := ServedHandle(route, versions)
	if err != nil {
		t.Fatal(err)
	}
	if fm, err := h.NewFieldManager(); err != nil || fm == nil || h.Store == nil || h.Serve != nil {
		t.Errorf("the served handle: field manager %v (%v), store %v", fm, err, h.Store)
	}
	inShop := genericapirequest.WithNamespace(ctx, "shop")
	widget := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "shop"}, "spec": map[string]any{"replicas": int64(2)}}}
	if _, err := h.Storage.(rest.Creater).Create(inShop, widget, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	key, err := h.Store.KeyFunc(inShop, "w")
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := client.Get(ctx, joinKey(c.Etcd.StorageConfig.Prefix, key)); err != nil || len(resp.Kvs) != 1 || !strings.Contains(string(resp.Kvs[0].Value), `"apiVersion":"example.com/v1"`) {
		t.Errorf("the widget at %s: %v (%v)", key, resp, err)
	}
	got, err := v1beta1.Stores["widgets"].(rest.Getter).Get(inShop, "w", &metav1.GetOptions{})
	if err != nil || got.GetObjectKind().GroupVersionKind().Version != "v1beta1" {
		t.Errorf("the widget read in v1beta1: %v (%v)", got, err)
	}

	route.Route.Version = "v2"
	if _, err := ServedHandle(route, versions); err == nil || !strings.Contains(err.Error(), "no longer serves it") {
		t.Errorf("a version the CRD no longer serves: %v", err)
	}
	if _, err := (noWebhooks{}).ResolveEndpoint("ns", "conv", 443); err == nil || !strings.Contains(err.Error(), "service ns/conv:443: regctl calls no webhooks") {
		t.Errorf("a conversion webhook: %v", err)
	}
}
