package apiserver

import (
	"context"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"
)

// WidgetsCRD is a CRD with what the CRD handler builds storage from: two
// served versions (v1 stored, v1beta1 not; conversion None), a structural
// schema with defaults and an enum, status and scale subresources, printer
// columns, a short name and a category.
const WidgetsCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    listKind: WidgetList
    shortNames: [wd]
    categories: [gadgets]
  conversion:
    strategy: None
  versions:
  - name: v1beta1
    served: true
    storage: false
    schema: &schema
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size:
                type: string
                enum: [small, large]
                default: small
              replicas:
                type: integer
                minimum: 0
                default: 1
              color:
                type: string
          status:
            type: object
            properties:
              replicas:
                type: integer
    subresources: &subresources
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
    additionalPrinterColumns: &columns
    - name: Size
      type: string
      jsonPath: .spec.size
    - name: Replicas
      type: integer
      jsonPath: .spec.replicas
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
  - name: v1
    served: true
    storage: true
    schema: *schema
    subresources: *subresources
    additionalPrinterColumns: *columns
`

// CreateWidgetsCRD creates WidgetsCRD through the apiserver and waits until
// it is established, i.e. served.
func CreateWidgetsCRD(t testing.TB, s *Server) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	return CreateCRD(t, s, WidgetsCRD)
}

// CreateCRD creates the CRD manifest (YAML or JSON) through the apiserver
// and waits until it is established and its first version is in
// discovery.
func CreateCRD(t testing.TB, s *Server, manifest string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal([]byte(manifest), crd); err != nil {
		t.Fatalf("reading the CRD: %v", err)
	}
	client, err := apiextensionsclient.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := client.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating customresourcedefinition %s: %v", crd.Name, err)
	}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		crd = got
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("waiting for customresourcedefinition %s to be established: %v", crd.Name, err)
	}
	// Discovery follows establishment on its own loop.
	var gv string
	for _, v := range crd.Spec.Versions {
		if v.Served && gv == "" {
			gv = crd.Spec.Group + "/" + v.Name
		}
	}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := s.Client.Discovery().ServerResourcesForGroupVersion(gv)
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s in discovery: %v", gv, err)
	}
	return crd
}
