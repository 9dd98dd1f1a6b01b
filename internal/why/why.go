// Package why is `regctl why`: what holds a deletion. For a namespace, every
// object etcd still holds in it, of every resource (a CRD's that is gone
// included), with its deletionTimestamp, its finalizers and who removes
// them, what keeps each one (a pod's kubelet, a claim's pods, foreground
// deletion's dependents), the conditions the namespace controller wrote,
// the APIServices that keep it from listing every API, and the way out,
// printed and never taken. For any other object, the same of it and of its
// dependents. It reads etcd at one revision and writes nothing.
package why

import (
	"context"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/stores"
)

// Formats are the output formats why prints.
var Formats = []render.Format{render.Table, render.YAML, render.JSON}

// Options are how why reads and prints.
type Options struct {
	Output render.Format
	// Revision is the etcd revision to read at; 0 is now.
	Revision int64
}

// Pages of the reads: keys alone are small, objects are decoded a page at
// a time.
const (
	keysPage    = 10000
	objectsPage = 500
)

// Report is what holds one object's deletion.
type Report struct {
	// Revision is the etcd revision everything was read at.
	Revision int64 `json:"revision"`
	// Object is the object asked about; for a namespace that is gone,
	// only its name.
	Object Object `json:"object"`
	// Gone says the object is not stored: for a namespace, what remains
	// in it is orphaned.
	Gone bool `json:"gone,omitempty"`
	// Namespace is a namespace's phase, spec.finalizers and the
	// conditions its controller wrote.
	Namespace *NamespaceState `json:"namespace,omitempty"`
	// Remaining counts a namespace's objects still stored, by resource;
	// FinalizersRemaining counts them by finalizer, as the namespace
	// controller's conditions do.
	Remaining           []Count `json:"remaining,omitempty"`
	FinalizersRemaining []Count `json:"finalizersRemaining,omitempty"`
	// Objects are a namespace's objects still stored, or an object's
	// dependents, sorted by resource, namespace and name.
	Objects []Object `json:"objects,omitempty"`
	// UnavailableAPIServices keep the namespace controller from listing
	// every API, and so from finishing any namespace.
	UnavailableAPIServices []APIService `json:"unavailableAPIServices,omitempty"`
	// TerminatingCRDs are CRDs being deleted whose objects remain here.
	TerminatingCRDs []Count `json:"terminatingCRDs,omitempty"`
	// GoneCRDs are the resources of CRDs that are gone whose objects
	// remain here: nothing serves, deletes or finalizes them.
	GoneCRDs []Count `json:"goneCRDs,omitempty"`
	// Unread are the resources whose values could not be read with the
	// flags given: what holds their objects is unknown.
	Unread []Unread `json:"unread,omitempty"`
	// WayOut are the steps that would let the deletion finish, in order;
	// why takes none of them.
	WayOut []Step `json:"wayOut,omitempty"`
}

// Object is one stored object and what holds it.
type Object struct {
	Resource          string       `json:"resource"`
	Namespace         string       `json:"namespace,omitempty"`
	Name              string       `json:"name"`
	Key               string       `json:"key"`
	UID               string       `json:"uid,omitempty"`
	DeletionTimestamp *metav1.Time `json:"deletionTimestamp,omitempty"`
	Finalizers        []Finalizer  `json:"finalizers,omitempty"`
	// HeldBy says what else keeps it: the kubelet that confirms a pod's
	// graceful deletion, the pods that use a claim, the dependents that
	// block a foreground deletion, the owner whose deletion it blocks.
	HeldBy []string `json:"heldBy,omitempty"`
	// Leftover marks an object of a CRD that is gone.
	Leftover bool `json:"leftover,omitempty"`
	// Unreadable is why its value could not be read.
	Unreadable string `json:"unreadable,omitempty"`
}

// NamespaceState is a namespace's own part of its deletion.
type NamespaceState struct {
	Phase          string      `json:"phase,omitempty"`
	SpecFinalizers []Finalizer `json:"specFinalizers,omitempty"`
	Conditions     []Condition `json:"conditions,omitempty"`
}

// Condition is one condition the namespace controller wrote.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// APIService is an aggregated API whose status says it is unavailable.
type APIService struct {
	Name    string `json:"name"`
	Service string `json:"service"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Unread is a resource whose values could not be read, and why.
type Unread struct {
	Resource string `json:"resource"`
	Reason   string `json:"reason"`
}

// Count is a name (a resource, a finalizer, a CRD) and how many objects.
type Count struct {
	Name    string `json:"name"`
	Objects int    `json:"objects"`
}

// Step is one step of the way out: what to do, the command that does it,
// and what it costs when it loses anything.
type Step struct {
	Do       string   `json:"do"`
	Commands []string `json:"commands,omitempty"`
	Warning  string   `json:"warning,omitempty"`
}

// Namespace explains what holds namespace name, from every stored
// resource in ks.
func Namespace(ctx context.Context, ks handle.Keyspace, name string, o Options) (*Report, error) {
	rev, err := revision(ctx, ks, o)
	if err != nil {
		return nil, err
	}
	r := &Report{Revision: rev, Object: Object{Resource: "namespaces", Name: name}}
	namespaces, err := handleOf(ks, "namespaces")
	if err != nil {
		return nil, err
	}
	ns, err := readOne(ctx, handle.Target{Handle: namespaces}, name, rev)
	notFound := err
	switch {
	case apierrors.IsNotFound(err):
		r.Gone = true
	case err != nil:
		return nil, err
	default:
		r.Object = ns.Object
		r.Namespace = namespaceState(ns.ext)
	}
	in, err := gather(ctx, ks, name, rev)
	if err != nil {
		return nil, err
	}
	objs := append(in.objects, in.leftovers...)
	if r.Gone && len(objs) == 0 {
		return nil, notFound // never there, or gone with nothing left
	}
	sortObjects(objs)
	holds(objs)
	for _, obj := range objs {
		r.Objects = append(r.Objects, obj.Object)
	}
	r.Remaining, r.FinalizersRemaining = tally(objs)
	if r.UnavailableAPIServices, err = unavailable(ctx, ks, rev); err != nil {
		return nil, err
	}
	if r.TerminatingCRDs, err = terminatingCRDs(ctx, ks, rev, objs); err != nil {
		return nil, err
	}
	r.GoneCRDs = goneCRDs(in.leftovers)
	r.Unread = in.unread
	r.WayOut = wayOutOfNamespace(r)
	return r, nil
}

// ObjectOf explains what holds one object: its own finalizers and
// deletion, and its dependents (read from its namespace, or from every
// resource for a cluster-scoped object, as the garbage collector would).
func ObjectOf(ctx context.Context, ks handle.Keyspace, t handle.Target, name string, o Options) (*Report, error) {
	rev, err := revision(ctx, ks, o)
	if err != nil {
		return nil, err
	}
	self, err := readOne(ctx, t, name, rev)
	if err != nil {
		return nil, err
	}
	in, err := gather(ctx, ks, t.Namespace, rev)
	if err != nil {
		return nil, err
	}
	objs := append(in.objects, in.leftovers...)
	for i, obj := range objs {
		if obj.Key == self.Key {
			objs[i] = self // the one read with its fields
		}
	}
	holds(objs)
	r := &Report{Revision: rev, Object: self.Object, Unread: in.unread}
	var deps []*stored
	for _, obj := range objs {
		if obj.Key != self.Key && ownedBy(obj, self.UID) {
			deps = append(deps, obj)
		}
	}
	sortObjects(deps)
	for _, d := range deps {
		r.Objects = append(r.Objects, d.Object)
	}
	r.WayOut = wayOutOfObject(r)
	return r, nil
}

func revision(ctx context.Context, ks handle.Keyspace, o Options) (int64, error) {
	if o.Revision != 0 {
		return o.Revision, nil
	}
	return etcdview.Revision(ctx, ks.Client)
}

func handleOf(ks handle.Keyspace, path string) (*handle.Handle, error) {
	for _, h := range ks.Handles {
		if h.Path == path {
			return h, nil
		}
	}
	return nil, fmt.Errorf("the storage map serves no %s", path)
}

// readOne reads one object at rev, with its served fields.
func readOne(ctx context.Context, t handle.Target, name string, rev int64) (*stored, error) {
	item, err := stores.GetInternalAt(ctx, t, name, rev)
	if err != nil {
		return nil, err
	}
	m, err := meta.Accessor(item)
	if err != nil {
		return nil, err
	}
	key, err := t.Key(m.GetNamespace(), m.GetName())
	if err != nil {
		return nil, err
	}
	o := &stored{Object: objectOf(t.Path, key, m), owners: m.GetOwnerReferences()}
	ext, err := stores.ToExternal(t, item)
	if err != nil {
		return nil, err
	}
	if o.ext, err = runtime.DefaultUnstructuredConverter.ToUnstructured(ext); err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", t.Path, name, err)
	}
	return o, nil
}

func namespaceState(ns map[string]any) *NamespaceState {
	s := &NamespaceState{}
	s.Phase, _, _ = unstructured.NestedString(ns, "status", "phase")
	fins, _, _ := unstructured.NestedStringSlice(ns, "spec", "finalizers")
	s.SpecFinalizers = finalizersOf(fins)
	conds, _, _ := unstructured.NestedSlice(ns, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		s.Conditions = append(s.Conditions, Condition{Type: str(m, "type"), Status: str(m, "status"), Reason: str(m, "reason"), Message: str(m, "message")})
	}
	sort.SliceStable(s.Conditions, func(i, j int) bool { return s.Conditions[i].Type < s.Conditions[j].Type })
	return s
}

func str(m map[string]any, field string) string {
	s, _, _ := unstructured.NestedString(m, field)
	return s
}

// tally counts objects by resource and by finalizer, as the namespace
// controller's NamespaceContentRemaining and NamespaceFinalizersRemaining
// conditions do.
func tally(objs []*stored) (byResource, byFinalizer []Count) {
	res, fin := map[string]int{}, map[string]int{}
	for _, o := range objs {
		res[o.Resource]++
		for _, f := range o.Finalizers {
			fin[f.Name]++
		}
	}
	return counts(res), counts(fin)
}

func counts(m map[string]int) []Count {
	out := make([]Count, 0, len(m))
	for name, n := range m {
		out = append(out, Count{Name: name, Objects: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if len(out) == 0 {
		return nil
	}
	return out
}

// unavailable are the APIServices whose Available condition is not True.
// The namespace controller lists every API the server's discovery serves;
// while one fails, it finishes no namespace.
func unavailable(ctx context.Context, ks handle.Keyspace, rev int64) ([]APIService, error) {
	var out []APIService
	err := listExternal(ctx, ks, handle.APIServicesPath, rev, func(o map[string]any) {
		svc, found, _ := unstructured.NestedMap(o, "spec", "service")
		if !found || svc == nil {
			return // served by kube-apiserver itself
		}
		conds, _, _ := unstructured.NestedSlice(o, "status", "conditions")
		var cond map[string]any
		for _, c := range conds {
			if m, _ := c.(map[string]any); str(m, "type") == "Available" {
				cond = m
			}
		}
		if cond != nil && str(cond, "status") == "True" {
			return
		}
		a := APIService{Service: str(svc, "namespace") + "/" + str(svc, "name")}
		a.Name, _, _ = unstructured.NestedString(o, "metadata", "name")
		if cond != nil {
			a.Reason, a.Message = str(cond, "reason"), str(cond, "message")
		}
		out = append(out, a)
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

// terminatingCRDs are the CRDs being deleted that still have objects
// among objs.
func terminatingCRDs(ctx context.Context, ks handle.Keyspace, rev int64, objs []*stored) ([]Count, error) {
	per := map[string]int{}
	for _, o := range objs {
		per[o.Resource]++
	}
	out := map[string]int{}
	err := listExternal(ctx, ks, handle.CRDsPath, rev, func(o map[string]any) {
		name, _, _ := unstructured.NestedString(o, "metadata", "name")
		if _, deleting, _ := unstructured.NestedString(o, "metadata", "deletionTimestamp"); deleting && per[name] > 0 {
			out[name] = per[name]
		}
	})
	return counts(out), err
}

func goneCRDs(leftovers []*stored) []Count {
	per := map[string]int{}
	for _, o := range leftovers {
		per[o.Resource]++
	}
	return counts(per)
}

// listExternal hands fn every object of path at rev, in its served
// version; a map without that path (a server with the API off) has none.
func listExternal(ctx context.Context, ks handle.Keyspace, path string, rev int64, fn func(map[string]any)) error {
	h, err := handleOf(ks, path)
	if err != nil {
		return nil
	}
	t := handle.Target{Handle: h}
	err = stores.List(ctx, t, stores.ListOptions{Revision: rev}, func(p stores.Page) error {
		for _, item := range p.Items {
			ext, err := stores.ListItemToExternal(t, item)
			if err != nil {
				return err
			}
			u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ext)
			if err != nil {
				return err
			}
			fn(u)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("listing %s: %w", path, err)
	}
	return nil
}
