package why

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// holds fills in what keeps each object, from the objects beside it: the
// kubelet that confirms a pod's graceful deletion, the pods that use a
// claim (which the claim's protection finalizer waits for), the dependents
// that block an owner's foreground deletion, and, on a dependent, the owner
// whose deletion it blocks.
func holds(objs []*stored) {
	byUID := map[string]*stored{}
	for _, o := range objs {
		if o.UID != "" {
			byUID[o.UID] = o
		}
	}
	for _, o := range objs {
		switch o.Resource {
		case "pods":
			if node := podNode(o); node != "" && o.DeletionTimestamp != nil {
				o.HeldBy = append(o.HeldBy, fmt.Sprintf("graceful deletion: waits for the kubelet of node %s to confirm the pod has stopped", node))
			}
		case "persistentvolumes":
			for _, c := range objs {
				if c.Resource == "persistentvolumeclaims" && claimedVolume(c) == o.Name {
					o.HeldBy = append(o.HeldBy, fmt.Sprintf("bound to persistentvolumeclaims/%s -n %s", c.Name, c.Namespace))
				}
			}
		case "persistentvolumeclaims":
			for _, p := range objs {
				if p.Resource == "pods" && p.Namespace == o.Namespace && usesClaim(p, o.Name) {
					o.HeldBy = append(o.HeldBy, fmt.Sprintf("used by pods/%s", p.Name))
				}
			}
		}
		for _, ref := range o.owners {
			owner := byUID[string(ref.UID)]
			if owner == nil || !blocks(ref) || !has(owner.Finalizers, metav1.FinalizerDeleteDependents) {
				continue
			}
			o.HeldBy = append(o.HeldBy, fmt.Sprintf("blocks the foreground deletion of its owner %s/%s (blockOwnerDeletion)", owner.Resource, owner.Name))
			owner.HeldBy = append(owner.HeldBy, fmt.Sprintf("dependent %s/%s blocks its foreground deletion (blockOwnerDeletion)", o.Resource, o.Name))
		}
	}
	for _, o := range objs {
		slices.Sort(o.HeldBy)
	}
}

func podNode(p *stored) string {
	node, _, _ := unstructured.NestedString(p.ext, "spec", "nodeName")
	return node
}

func claimedVolume(c *stored) string {
	name, _, _ := unstructured.NestedString(c.ext, "spec", "volumeName")
	return name
}

func usesClaim(p *stored, claim string) bool {
	vols, _, _ := unstructured.NestedSlice(p.ext, "spec", "volumes")
	for _, v := range vols {
		m, _ := v.(map[string]any)
		if name, _, _ := unstructured.NestedString(m, "persistentVolumeClaim", "claimName"); name == claim {
			return true
		}
	}
	return false
}

func blocks(ref metav1.OwnerReference) bool {
	return ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion
}

func has(fins []Finalizer, name string) bool {
	return slices.ContainsFunc(fins, func(f Finalizer) bool { return f.Name == name })
}

// ownedBy tells whether o names uid among its owners.
func ownedBy(o *stored, uid string) bool {
	return slices.ContainsFunc(o.owners, func(ref metav1.OwnerReference) bool { return string(ref.UID) == uid })
}
