package agreement

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/test/integration/etcd"
	"k8s.io/utils/ptr"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/etcdview/embedded"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/stores"
	"github.com/regctl/regctl/test/apiserver"
)

// TestCustomResourceKeysAgreeWithUpstreamStorageData writes upstream's
// storage-test CRDs into an etcd through regctl's own CRD store, established
// as the apiextensions controllers would leave them, builds the map again,
// and creates each custom resource of upstream's data through regctl's
// stores, as upstream's TestEtcdStoragePath does through a server: the
// value is at upstream's ExpectedEtcdPath, under the route's key prefix, in
// upstream's expected storage version.
func TestCustomResourceKeysAgreeWithUpstreamStorageData(t *testing.T) {
	const namespace = "etcdstoragepathtestnamespace"
	e, err := embedded.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	etcdFlag := "--etcd-servers=" + e.ClientURL
	establishCRDs(t, apiserver.Map(t, etcdFlag))
	w := apiserver.Map(t, etcdFlag)
	ctx := context.Background()
	namespaces := stores.NewNamespaceCache(w.Map.Handles["namespaces"])
	nsObj, err := stores.Decode(handle.Target{Handle: w.Map.Handles["namespaces"]}, []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"`+namespace+`"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stores.Create(ctx, handle.Target{Handle: w.Map.Handles["namespaces"]}, nsObj, stores.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{e.ClientURL}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()

	crdGroups := map[string]bool{}
	for _, crd := range etcd.GetCustomResourceDefinitionData() {
		crdGroups[crd.Spec.Group] = true
	}
	checked := 0
	for gvr, d := range etcd.GetEtcdStorageDataForNamespace(namespace) {
		if !crdGroups[gvr.Group] {
			continue
		}
		checked++
		h, err := w.Map.Resolve(gvr.Resource + "." + gvr.Version + "." + gvr.Group)
		if err != nil {
			t.Errorf("%s: %v", gvr, err)
			continue
		}
		target := handle.Target{Handle: h}
		if h.Resource.Namespaced {
			target.Namespace = namespace
		}
		obj, err := stores.Decode(target, []byte(d.Stub))
		if apierrors.IsBadRequest(err) {
			// Upstream posts a field the schema prunes, with the server's
			// default field validation (Warn). regctl validates strictly,
			// as kubectl asks the server to: the field is refused by its
			// path; without it the stub is what the server stores.
			if !strings.Contains(err.Error(), `unknown field "garbage"`) {
				t.Fatalf("%s: %v", gvr, err)
			}
			obj, err = stores.Decode(target, []byte(strings.Replace(d.Stub, `, "garbage": "oiujnasdf"`, "", 1)))
		}
		if err != nil {
			t.Fatalf("%s: decoding the stub: %v", gvr, err)
		}
		if _, err := stores.Create(ctx, target, obj, stores.WriteOptions{Namespaces: namespaces}); err != nil {
			t.Fatalf("%s: creating the stub: %v", gvr, err)
		}
		resp, err := client.Get(ctx, d.ExpectedEtcdPath)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) != 1 {
			t.Errorf("%s: nothing at upstream's %s", gvr, d.ExpectedEtcdPath)
			continue
		}
		var stored metav1.TypeMeta
		if err := json.Unmarshal(resp.Kvs[0].Value, &stored); err != nil {
			t.Fatalf("%s: the stored value is not json: %v", gvr, err)
		}
		want := gvr.GroupVersion().WithKind(stored.Kind)
		if d.ExpectedGVK != nil {
			want = *d.ExpectedGVK
		}
		if got := schema.FromAPIVersionAndKind(stored.APIVersion, stored.Kind); got != want {
			t.Errorf("%s: stored as %s, upstream expects %s", gvr, got, want)
		}
		if h.Route.StorageVersion != want.GroupVersion().String() {
			t.Errorf("%s: the route's storage version is %s, upstream expects %s", gvr, h.Route.StorageVersion, want.GroupVersion())
		}
	}
	if checked < 4 {
		t.Errorf("checked %d custom resources of upstream's data, want every one", checked)
	}
}

// establishCRDs writes upstream's storage-test CRDs through the map's CRD
// store, established.
func establishCRDs(t *testing.T, w *storagemap.Session) {
	t.Helper()
	establish(t, w, etcd.GetCustomResourceDefinitionData()...)
}

// establish writes CRDs through the map's CRD store, defaulted as the
// server's decoder defaults a posted CRD, then their status as the naming
// and establishing controllers set it.
func establish(t *testing.T, w *storagemap.Session, v1s ...*apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	crds := w.Map.Handles["customresourcedefinitions.apiextensions.k8s.io"].Storage.(rest.Creater)
	status := w.Map.Handles["customresourcedefinitions.apiextensions.k8s.io/status"].Storage.(rest.Updater)
	crdCtx := stores.RequestContext(context.Background(), handle.Target{Handle: w.Map.Handles["customresourcedefinitions.apiextensions.k8s.io"]})
	statusCtx := stores.RequestContext(context.Background(), handle.Target{Handle: w.Map.Handles["customresourcedefinitions.apiextensions.k8s.io/status"]})
	for _, v1 := range v1s {
		apiextensionsapiserver.Scheme.Default(v1)
		crd := &apiextensions.CustomResourceDefinition{}
		if err := apiextensionsapiserver.Scheme.Convert(v1, crd, nil); err != nil {
			t.Fatal(err)
		}
		created, err := crds.Create(crdCtx, crd, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating %s: %v", crd.Name, err)
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

// TestConversionWebhooksAreNotCalled reads and writes the custom resources
// of a CRD whose conversion is a webhook: in the storage version nothing
// converts; in another version regctl says it calls no webhooks, and
// writes nothing.
func TestConversionWebhooksAreNotCalled(t *testing.T) {
	e, err := embedded.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	etcdFlag := "--etcd-servers=" + e.ClientURL
	anything := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}}
	port := int32(443)
	establish(t, apiserver.Map(t, etcdFlag), &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Scope: apiextensionsv1.ClusterScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Kind: "Gadget"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1beta1", Served: true, Schema: anything},
				{Name: "v1", Served: true, Storage: true, Schema: anything},
			},
			Conversion: &apiextensionsv1.CustomResourceConversion{
				Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{
					ConversionReviewVersions: []string{"v1"},
					ClientConfig:             &apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{Namespace: "tools", Name: "converter", Port: &port}},
				},
			},
		},
	})
	w := apiserver.Map(t, etcdFlag)
	ctx := context.Background()
	v1Handle, err := w.Map.Handle("gadgets.example.com")
	if err != nil {
		t.Fatal(err)
	}
	v1 := handle.Target{Handle: v1Handle}
	obj, err := stores.Decode(v1, []byte(`{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g1"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stores.Create(ctx, v1, obj, stores.WriteOptions{}); err != nil {
		t.Fatalf("creating in the storage version: %v", err)
	}
	if _, err := stores.Get(ctx, v1, "g1"); err != nil {
		t.Fatalf("reading in the storage version: %v", err)
	}
	v1beta1Handle, err := w.Map.Handle("gadgets.v1beta1.example.com")
	if err != nil {
		t.Fatal(err)
	}
	v1beta1 := handle.Target{Handle: v1beta1Handle}
	const refusal = "converting through the webhook of service tools/converter:443: regctl calls no webhooks"
	if _, err := stores.Get(ctx, v1beta1, "g1"); err == nil || !strings.Contains(err.Error(), refusal) {
		t.Errorf("reading in another version: %v, want %q", err, refusal)
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{e.ClientURL}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	before, err := etcdview.Revision(ctx, client)
	if err != nil {
		t.Fatal(err)
	}
	obj, err = stores.Decode(v1beta1, []byte(`{"apiVersion":"example.com/v1beta1","kind":"Gadget","metadata":{"name":"g2"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stores.Create(ctx, v1beta1, obj, stores.WriteOptions{}); err == nil || !strings.Contains(err.Error(), refusal) {
		t.Errorf("creating in another version: %v, want %q", err, refusal)
	}
	if after, err := etcdview.Revision(ctx, client); err != nil || after != before {
		t.Errorf("a refused create moved the revision from %d to %d (%v)", before, after, err)
	}
}
