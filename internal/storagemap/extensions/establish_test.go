package extensions_test

import (
	"context"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/regctl/regctl/internal/storagemap/extensions"
	"github.com/regctl/regctl/internal/storagemap/maptest"
	"github.com/regctl/regctl/internal/storagemap/restoptions"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
)

func newCRD(plural, group, kind string, annotations map[string]string) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group, Annotations: annotations},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: plural[:len(plural)-1], Kind: kind, ListKind: kind + "List"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
}

// TestEstablishingRunsTheServersControllers, on a map's etcd where no
// apiserver runs: the CRDs created through its loopback client are
// approved (a protected group's first), named and established by the
// server's own controllers; a CRD whose names another holds is said to be
// refused, and one that is gone is passed over.
func TestEstablishingRunsTheServersControllers(t *testing.T) {
	ctx := context.Background()
	s, _ := maptest.Open(t)
	client, err := apiextensionsclient.NewForConfig(s.LoopbackConfig())
	if err != nil {
		t.Fatal(err)
	}
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	create := func(crd *apiextensionsv1.CustomResourceDefinition) {
		t.Helper()
		if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	etcd := *serverflags.NewOptions().Server.Etcd
	etcd.StorageConfig.Transport.ServerList = []string{s.Embedded.ClientURL}
	c := extensions.Chain{Etcd: etcd, Getter: &restoptions.Getter{MainServers: etcd.StorageConfig.Transport.ServerList,
		Encryption: func(schema.GroupResource) string { return "identity" }}}
	store, err := c.SchemalessCRDs()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	establish := func(names ...string) error {
		return extensions.Establish(ctx, names, s.LoopbackConfig(), store, 10*time.Second)
	}

	create(newCRD("widgets", "example.com", "Widget", nil))
	create(newCRD("gadgets", "test.k8s.io", "Gadget", map[string]string{"api-approved.kubernetes.io": "unapproved, a test"}))
	if err := establish("widgets.example.com", "gadgets.test.k8s.io"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"widgets.example.com", "gadgets.test.k8s.io"} {
		crd, err := crds.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var conditions []string
		for _, c := range crd.Status.Conditions {
			conditions = append(conditions, string(c.Type)+"="+string(c.Status))
		}
		want := "NamesAccepted=True,Established=True"
		if strings.HasSuffix(name, ".k8s.io") {
			want = "KubernetesAPIApprovalPolicyConformant=False," + want
		}
		if got := strings.Join(conditions, ","); got != want {
			t.Errorf("%s: conditions %s, want %s", name, got, want)
		}
	}

	create(newCRD("bees", "example.com", "Widget", nil))
	err = establish("bees.example.com")
	if err == nil || !strings.HasPrefix(err.Error(), "customresourcedefinition bees.example.com is not established: its names are not accepted: ") || !strings.Contains(err.Error(), `"WidgetList" is already in use`) {
		t.Errorf("a CRD whose kind another serves: %v", err)
	}
	if err := establish("gone.example.com"); err != nil {
		t.Errorf("a CRD gone: %v", err)
	}
}
