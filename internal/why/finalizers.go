package why

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	servicehelpers "k8s.io/cloud-provider/service/helpers"
	"k8s.io/kubernetes/cmd/kube-controller-manager/names"
	volumeutil "k8s.io/kubernetes/pkg/volume/util"
)

// remover is who removes a finalizer Kubernetes itself adds, and when.
type remover struct {
	By, When string
}

// removers are the finalizers of Kubernetes' own controllers, named by
// the constants the controllers add and remove them with, beside the
// controller's name as kube-controller-manager's --controllers takes it.
// A finalizer not here is another controller's: whoever added it.
var removers = map[string]remover{
	metav1.FinalizerOrphanDependents:               {names.GarbageCollectorController, "once it has removed this object from its dependents' ownerReferences"},
	metav1.FinalizerDeleteDependents:               {names.GarbageCollectorController, "once every dependent that blocks its owner's deletion (blockOwnerDeletion) is gone"},
	string(corev1.FinalizerKubernetes):             {names.NamespaceController, "once the namespace holds nothing"},
	volumeutil.PVCProtectionFinalizer:              {names.PersistentVolumeClaimProtectionController, "once no pod uses the claim"},
	volumeutil.PVProtectionFinalizer:               {names.PersistentVolumeProtectionController, "once no claim is bound to the volume"},
	volumeutil.VACProtectionFinalizer:              {names.VolumeAttributesClassProtectionController, "once no claim or volume uses the class"},
	batchv1.JobTrackingFinalizer:                   {names.JobController, "once the job has counted the pod"},
	resourcev1.Finalizer:                           {names.ResourceClaimController, "once no pod uses the claim"},
	apiextensionsv1.CustomResourceCleanupFinalizer: {"kube-apiserver (the CRD finalizer)", "once every object of the CRD is deleted"},
	servicehelpers.LoadBalancerCleanupFinalizer:    {"cloud-controller-manager (service-lb-controller)", "once the cloud's load balancer is deleted"},
}

// Finalizer is one finalizer of an object, and who removes it.
type Finalizer struct {
	Name string `json:"name"`
	// RemovedBy is the controller that removes it, for Kubernetes' own;
	// empty for another controller's.
	RemovedBy string `json:"removedBy,omitempty"`
	When      string `json:"when,omitempty"`
}

func finalizersOf(list []string) []Finalizer {
	var out []Finalizer
	for _, name := range list {
		r := removers[name]
		out = append(out, Finalizer{Name: name, RemovedBy: r.By, When: r.When})
	}
	return out
}

// ownController tells whether a finalizer is one of Kubernetes' own.
func (f Finalizer) ownController() bool { return f.RemovedBy != "" }
