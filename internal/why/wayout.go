package why

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// wayOutOfNamespace is what would let namespace r.Object finish, in the
// order to try it: what blocks the namespace controller everywhere (an
// unavailable APIService), then what holds each object, and last, as a
// last resort with what it loses, finalizing the namespace by hand.
func wayOutOfNamespace(r *Report) []Step {
	ns := r.Object.Name
	if r.Gone {
		if len(r.Objects) == 0 {
			return nil
		}
		return []Step{{
			Do:       fmt.Sprintf("namespace %s is gone and %s remain in etcd, orphaned: nothing serves or deletes them; create the namespace again and delete it, so that its controller deletes them", ns, objects(len(r.Objects))),
			Commands: []string{fmt.Sprintf("kubectl create namespace %s && kubectl delete namespace %s", ns, ns)},
		}}
	}
	var steps []Step
	if r.Object.DeletionTimestamp == nil {
		steps = append(steps, Step{Do: fmt.Sprintf("namespace %s is not being deleted: nothing holds it", ns)})
		return steps
	}
	for _, a := range r.UnavailableAPIServices {
		steps = append(steps, Step{
			Do:       fmt.Sprintf("bring back service %s behind APIService %s or, if its API is no longer used, delete the APIService: while an APIService is unavailable the namespace controller cannot list every API, and finishes no namespace", a.Service, a.Name),
			Commands: []string{"kubectl delete apiservice " + a.Name},
		})
	}
	steps = append(steps, unreadSteps(r.Unread)...)
	for _, c := range r.GoneCRDs {
		steps = append(steps, Step{
			Do: fmt.Sprintf("customresourcedefinition %s is gone and %s of it %s here, which no server serves or deletes: create the CRD again (from where it was installed), and the namespace controller deletes them", c.Name, objects(c.Objects), remain(c.Objects)),
		})
	}
	steps = append(steps, objectSteps(append([]Object{r.Object}, r.Objects...))...)
	if n := notDeleted(r.Objects); n > 0 {
		steps = append(steps, Step{Do: fmt.Sprintf("%s %s not being deleted yet: %s deletes %s, pods first, then the rest; make sure it runs (kube-controller-manager's --controllers)", objects(n), isAre(n), removers[string(corev1.FinalizerKubernetes)].By, them(n))})
	}
	finalize := Step{
		Do: fmt.Sprintf("last resort, once nothing above can be done: finalize namespace %s by hand, emptying its spec.finalizers (with kube-apiserver down, through regctl)", ns),
		Commands: []string{
			fmt.Sprintf("kubectl get namespace %s -o json | jq '.spec.finalizers = []' | kubectl replace --raw /api/v1/namespaces/%s/finalize -f -", ns, ns),
			fmt.Sprintf("regctl get namespace %s -o json | jq '.spec.finalizers = []' | regctl replace --subresource finalize -f -", ns),
		},
	}
	if n := len(r.Objects); n > 0 {
		finalize.Warning = fmt.Sprintf("%s still stored in namespace %s would stay in etcd, orphaned: once the namespace is gone nothing serves or deletes %s (regctl scan reports %s as namespace-gone); take the steps above first", objects(n), ns, them(n), them(n))
	}
	if r.Namespace != nil && has(r.Namespace.SpecFinalizers, string(corev1.FinalizerKubernetes)) {
		steps = append(steps, finalize)
	}
	return steps
}

// wayOutOfObject is what would let one object's deletion finish.
func wayOutOfObject(r *Report) []Step {
	o := r.Object
	if o.DeletionTimestamp == nil && len(o.Finalizers) == 0 {
		return []Step{{Do: fmt.Sprintf("%s/%s is not being deleted and has no finalizers: nothing holds it", o.Resource, o.Name)}}
	}
	return append(unreadSteps(r.Unread), objectSteps(append([]Object{o}, r.Objects...))...)
}

// unreadSteps say, once per resource, that what could not be read may
// hold the deletion too.
func unreadSteps(unread []Unread) []Step {
	var steps []Step
	for _, u := range unread {
		steps = append(steps, Step{Do: fmt.Sprintf("%s could not be read, so what holds them is not known: %s", u.Resource, u.Reason)})
	}
	return steps
}

// objectSteps are the steps for what holds each object: a pod waiting for
// a kubelet, a finalizer of a controller that is not Kubernetes', an
// object that could not be read.
func objectSteps(objs []Object) []Step {
	var steps []Step
	for _, o := range objs {
		ns := ""
		if o.Namespace != "" {
			ns = " -n " + o.Namespace
		}
		for _, held := range o.HeldBy {
			if node, ok := strings.CutPrefix(held, "graceful deletion: waits for the kubelet of node "); ok {
				node, _, _ = strings.Cut(node, " ")
				steps = append(steps, Step{
					Do:       fmt.Sprintf("if node %s is gone for good, delete pods/%s at once, as the pod garbage collector does for the pods of a deleted node", node, o.Name),
					Commands: []string{fmt.Sprintf("kubectl delete pod %s%s --grace-period=0 --force", o.Name, ns)},
				})
			}
		}
		if o.Unreadable != "" && o.Unreadable != valueUnread && !o.Leftover {
			steps = append(steps, Step{Do: fmt.Sprintf("%s/%s could not be read (%s): read it with the server's flags (`--encryption-provider-config`) to see what holds it", o.Resource, o.Name, o.Unreadable)})
		}
		for i, f := range o.Finalizers {
			if f.ownController() || o.Leftover { // no API to patch a leftover through: its CRD step says what to do
				continue
			}
			patch, _ := json.Marshal([]map[string]any{
				{"op": "test", "path": fmt.Sprintf("/metadata/finalizers/%d", i), "value": f.Name},
				{"op": "remove", "path": fmt.Sprintf("/metadata/finalizers/%d", i)},
			})
			steps = append(steps, Step{
				Do:       fmt.Sprintf("the controller that added finalizer %s to %s/%s removes it once it has cleaned up: make sure that controller runs; if it is gone for good, remove the finalizer (what it would have cleaned up stays undone)", f.Name, o.Resource, o.Name),
				Commands: []string{fmt.Sprintf("kubectl patch %s %s%s --type=json -p '%s'", o.Resource, o.Name, ns, patch)},
			})
		}
		for _, f := range o.Finalizers {
			if f.ownController() && o.DeletionTimestamp != nil && len(o.HeldBy) == 0 && f.Name != metav1.FinalizerDeleteDependents {
				steps = append(steps, Step{Do: fmt.Sprintf("%s removes finalizer %s from %s/%s %s, and nothing here holds it: make sure it runs (kube-controller-manager's --controllers)", f.RemovedBy, f.Name, o.Resource, o.Name, f.When)})
			}
		}
		if o.DeletionTimestamp != nil && has(o.Finalizers, metav1.FinalizerDeleteDependents) {
			steps = append(steps, Step{Do: fmt.Sprintf("%s/%s waits for its dependents that block owner deletion: they are listed with it; the garbage collector (%s) deletes them first", o.Resource, o.Name, removers[metav1.FinalizerDeleteDependents].By)})
		}
	}
	return steps
}

// notDeleted counts the objects with no deletionTimestamp, which the
// namespace controller has not deleted yet; leftovers are no server's.
func notDeleted(objs []Object) int {
	n := 0
	for _, o := range objs {
		if o.DeletionTimestamp == nil && !o.Leftover && o.Unreadable == "" {
			n++
		}
	}
	return n
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

func objects(n int) string {
	if n == 1 {
		return "1 object"
	}
	return fmt.Sprintf("%d objects", n)
}
