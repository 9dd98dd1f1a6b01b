package storagemap

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/yaml"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/etcdview/embedded"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
	"github.com/regctl/regctl/internal/stores"
)

// crdsInEtcd are three CRDs of one group: one established with two served
// versions, one established, cluster-scoped, with one version, and one the
// apiextensions controllers have not established yet.
var crdsInEtcd = []string{`
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList, shortNames: [wd]}
  versions:
  - {name: v1beta1, served: true, storage: false, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}, subresources: {status: {}}}
`, `
metadata: {name: gizmos.example.com}
spec:
  group: example.com
  scope: Cluster
  names: {plural: gizmos, singular: gizmo, kind: Gizmo, listKind: GizmoList}
  versions:
  - {name: v1alpha1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`, `
metadata: {name: pendings.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: pendings, singular: pending, kind: Pending, listKind: PendingList}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`}

// TestCustomResourcesFromTheCRDsInEtcd writes CRDs through regctl's own
// CRD store, as the apiextensions server and its controllers would (the
// CRD, then its status), and builds the map again: the established CRDs'
// served versions are paths, named as kubectl names them, the group's
// preferred version being its highest; the others are not. Building reads
// the CRDs and writes nothing, and a map for other resources builds no
// custom resource storage.
func TestCustomResourcesFromTheCRDsInEtcd(t *testing.T) {
	e, err := embedded.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	w := build(t, "--etcd-servers="+e.ClientURL)
	writeCRDs(t, w, crdsInEtcd[:2], true)
	writeCRDs(t, w, crdsInEtcd[2:], false)
	w.Close()

	client, err := clientv3.New(clientv3.Config{Endpoints: []string{e.ClientURL}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	before, err := etcdview.Revision(context.Background(), client)
	if err != nil {
		t.Fatal(err)
	}
	full := build(t, "--etcd-servers="+e.ClientURL)
	routes := routeMap(full)
	if got := full.Map.NotEstablished(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Pending"}); got != "pendings.example.com" {
		t.Errorf("NotEstablished(Pending) = %q, want the CRD not established", got)
	}
	if got := full.Map.NotEstablished(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}); got != "" {
		t.Errorf("NotEstablished(Widget) = %q, want none: it is established", got)
	}
	// The CRD a name RESOURCE.GROUP names is read first; as it is not
	// established, its group's CRDs are, and the map says why.
	opts := serverflags.NewOptions()
	opts.Server.Etcd.StorageConfig.Transport.ServerList = []string{e.ClientURL}
	pending, err := Open(context.Background(), Config{Options: opts, Timeout: 10 * time.Second, Only: "pendings.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if got := pending.Map.NotEstablished(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Pending"}); got != "pendings.example.com" {
		t.Errorf("a map for pendings.example.com: NotEstablished(Pending) = %q, want the CRD not established", got)
	}
	pending.Close()
	if after, err := etcdview.Revision(context.Background(), client); err != nil || after != before {
		t.Errorf("building the map moved the etcd revision from %d to %d (%v)", before, after, err)
	}
	for path, want := range map[string]string{
		"widgets.example.com":         "Namespaced example.com/v1",
		"widgets.example.com/status":  "Namespaced example.com/v1",
		"widgets.v1beta1.example.com": "Namespaced example.com/v1",
		"gizmos.v1alpha1.example.com": "Cluster example.com/v1alpha1",
	} {
		r, ok := routes[path]
		if !ok {
			t.Errorf("no route %s", path)
			continue
		}
		if got := r.Scope + " " + r.StorageVersion; got != want {
			t.Errorf("%s: %s, want %s", path, got, want)
		}
	}
	// A command on pods reads no CRD: it builds no custom resource storage
	// and knows no custom resource's name.
	opts = serverflags.NewOptions()
	opts.Server.Etcd.StorageConfig.Transport.ServerList = []string{e.ClientURL}
	pods, err := Open(context.Background(), Config{Options: opts, Timeout: 5 * time.Second, Only: "pods"})
	if err != nil {
		t.Fatal(err)
	}
	defer pods.Close()
	if _, built := pods.getter.Decision(schema.GroupResource{Group: "example.com", Resource: "widgets"}); built {
		t.Error("a map for pods built the widgets' storage")
	}
	if _, err := pods.Map.resourceFor("wd"); err == nil {
		t.Errorf("a map for pods read the CRDs: it resolves wd")
	}
	for _, path := range []string{"pendings.example.com", "pendings.v1.example.com", "widgets.v1.example.com", "widgets.example.com/scale",
		// Subresources are per version: v1beta1 has none.
		"widgets.v1beta1.example.com/status"} {
		if _, ok := routes[path]; ok {
			t.Errorf("route %s: want none", path)
		}
	}
}

// TestBuiltInNamesReadNoCRDs checks that a command on built-in resources
// does not read the CRDs and APIServices in etcd (a built-in resource wins
// over a custom one of the same name, as in kubectl), so an unreadable CRD
// fails only the commands that need CRDs.
func TestBuiltInNamesReadNoCRDs(t *testing.T) {
	e, client := liveEtcd(t)
	if _, err := client.Put(context.Background(), "/registry/apiextensions.k8s.io/customresourcedefinitions/broken.example.com", "not a CRD"); err != nil {
		t.Fatal(err)
	}
	opts := serverflags.NewOptions()
	opts.Server.Etcd.StorageConfig.Transport.ServerList = []string{e.ClientURL}
	for only, wantErr := range map[string]bool{"pods": false, "deploy,po": false, "widgets": true, "all": true, "": true} {
		w, err := Open(context.Background(), Config{Options: opts, Timeout: 5 * time.Second, Only: only})
		if err == nil {
			w.Close()
		}
		if (err != nil) != wantErr {
			t.Errorf("Only %q: error %v, want one: %v", only, err, wantErr)
		}
	}
}

// writeCRDs writes the CRDs docs (YAML of v1 CRDs) through the map's CRD
// store, as the apiextensions server would, and, when establish is true,
// their status as its controllers would.
func writeCRDs(t *testing.T, w *Session, docs []string, establish bool) {
	t.Helper()
	crds := w.Map.Handles["customresourcedefinitions.apiextensions.k8s.io"].Storage.(rest.Creater)
	status := w.Map.Handles["customresourcedefinitions.apiextensions.k8s.io/status"].Storage.(rest.Updater)
	crdCtx := stores.RequestContext(context.Background(), handle.Target{Handle: w.Map.Handles["customresourcedefinitions.apiextensions.k8s.io"]})
	statusCtx := stores.RequestContext(context.Background(), handle.Target{Handle: w.Map.Handles["customresourcedefinitions.apiextensions.k8s.io/status"]})
	for _, doc := range docs {
		v1 := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal([]byte(doc), v1); err != nil {
			t.Fatal(err)
		}
		crd := &apiextensions.CustomResourceDefinition{}
		if err := apiextensionsapiserver.Scheme.Convert(v1, crd, nil); err != nil {
			t.Fatal(err)
		}
		created, err := crds.Create(crdCtx, crd, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating %s: %v", crd.Name, err)
		}
		if !establish {
			continue
		}
		crd = created.(*apiextensions.CustomResourceDefinition)
		crd.Status.AcceptedNames = crd.Spec.Names
		for _, c := range []apiextensions.CustomResourceDefinitionConditionType{apiextensions.NamesAccepted, apiextensions.Established} {
			crd.Status.Conditions = append(crd.Status.Conditions, apiextensions.CustomResourceDefinitionCondition{Type: c, Status: apiextensions.ConditionTrue, Reason: "Test"})
		}
		if _, _, err := status.Update(statusCtx, crd.Name, rest.DefaultUpdatedObjectInfo(crd), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); err != nil {
			t.Fatalf("establishing %s: %v", crd.Name, err)
		}
	}
}
