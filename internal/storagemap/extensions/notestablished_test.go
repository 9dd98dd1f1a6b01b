package extensions

import (
	"errors"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	listers "k8s.io/apiextensions-apiserver/pkg/client/listers/apiextensions/v1"
	"k8s.io/client-go/tools/cache"
)

// TestWhatIsNotEstablishedIsSaid: the first CRD left unestablished is
// named, with what its Established condition says, and the cause kept.
func TestWhatIsNotEstablishedIsSaid(t *testing.T) {
	bad := crd("bads", "example.com", "Bad", apiextensionsv1.NamespaceScoped, false, crdVersion("v1", true))
	bad.Status.Conditions = append(bad.Status.Conditions, apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionFalse, Message: "invalid CA bundle"})
	slow := crd("slows", "example.com", "Slow", apiextensionsv1.NamespaceScoped, false, crdVersion("v1", true))
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, c := range []*apiextensionsv1.CustomResourceDefinition{widgets(), bad, slow} {
		if err := indexer.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	lister := listers.NewCustomResourceDefinitionLister(indexer)
	cause := errors.New("no progress")
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"widgets.example.com", "bads.example.com"}, "customresourcedefinition bads.example.com is not established (invalid CA bundle): no progress"},
		{[]string{"gone.example.com", "slows.example.com"}, "customresourcedefinition slows.example.com is not established: no progress"},
		{[]string{"widgets.example.com", "gone.example.com"}, "establishing customresourcedefinitions widgets.example.com, gone.example.com: no progress"},
	} {
		if err := notEstablished(lister, c.names, cause); err == nil || err.Error() != c.want || !errors.Is(err, cause) {
			t.Errorf("%v: %v\nwant %s", c.names, err, c.want)
		}
	}

	protected := crd("gadgets", "test.k8s.io", "Gadget", apiextensionsv1.NamespaceScoped, false, crdVersion("v1", true))
	if !approvalsWritten([]*apiextensionsv1.CustomResourceDefinition{widgets()}) || approvalsWritten([]*apiextensionsv1.CustomResourceDefinition{widgets(), protected}) {
		t.Error("approvals: want those of protected groups alone")
	}
	protected.Status.Conditions = append(protected.Status.Conditions, apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.KubernetesAPIApprovalPolicyConformant, Status: apiextensionsv1.ConditionFalse})
	if !approvalsWritten([]*apiextensionsv1.CustomResourceDefinition{protected}) {
		t.Error("an approval condition written, even false, is written")
	}
}
