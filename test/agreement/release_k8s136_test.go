//go:build k8s1.36

package agreement

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubernetes/test/integration/etcd"

	"github.com/regctl/regctl/test/apiserver"
)

// TestEmulated135LeavesOutMutatingAdmissionPoliciesAtV1 pins a difference
// from upstream's storage data, where regctl agrees with the server:
// GetEtcdStorageDataServedAt("1.35", true) lists admissionregistration.k8s.io/v1
// mutatingadmissionpolicies and their bindings, but a kube-apiserver v1.36.3
// emulating 1.35 with every beta feature and API on does not serve them
// either (its MutatingAdmissionPolicy plugin's informer gets "could not find
// the requested resource" for v1, and the server exits at a post-start
// hook, so it cannot be started here to compare discovery).
func TestEmulated135LeavesOutMutatingAdmissionPoliciesAtV1(t *testing.T) {
	w := apiserver.Map(t, "--emulated-version=1.35", "--runtime-config=api/all=true", "--feature-gates=AllBeta=true")
	data := etcd.GetEtcdStorageDataServedAt("1.35", true)
	for _, resource := range []string{"mutatingadmissionpolicies", "mutatingadmissionpolicybindings"} {
		gvr := schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: resource}
		if _, ok := data[gvr]; !ok {
			t.Errorf("upstream's 1.35 storage data no longer lists %s: this pin can go", gvr)
		}
		for _, r := range w.Map.Table.Routes {
			if r.Group == gvr.Group && r.Version == gvr.Version && r.Resource == resource {
				t.Errorf("regctl's map emulating 1.35 serves %s (%s), which kube-apiserver does not", gvr, r.Path)
			}
		}
	}
}
