package stores

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/manifest"
)

// Decode turns a manifest object (JSON in the target's served version) into
// the store's object, as the apiserver's create and update handlers do with
// the path's serializer and strict field validation (kubectl's default):
// unknown or duplicate fields are errors; defaulting, conversion to the
// version the store holds (the internal version; a custom resource's own
// version, its schema's defaults applied).
func Decode(t handle.Target, data []byte) (runtime.Object, error) {
	obj, _, err := DecodeValidating(t, data, metav1.FieldValidationStrict)
	return obj, err
}

// DecodeValidating is Decode with the field validation the create and
// update handlers apply as kubectl's --validate asks them to: Strict
// refuses unknown and duplicate fields, Warn returns them as warnings and
// Ignore passes over them. Either way a custom resource's unknown fields
// are then pruned by its schema, as the server prunes them.
func DecodeValidating(t handle.Target, data []byte, validation string) (runtime.Object, []string, error) {
	var strict runtime.Serializer
	for _, info := range t.Codec.Serializer.SupportedMediaTypes() {
		if info.MediaType == runtime.ContentTypeJSON {
			strict = info.StrictSerializer
			if validation == metav1.FieldValidationIgnore {
				strict = info.Serializer
			}
		}
	}
	if strict == nil {
		return nil, nil, fmt.Errorf("%s takes no json", t.Path)
	}
	decoder := t.Codec.Serializer.DecoderToVersion(strict, t.Codec.Hub)
	gvk := t.GroupVersion().WithKind(t.Resource.Kind)
	// Into a new object of the store, as the create handler decodes: an
	// Unstructured that already says its kind is what lets a custom
	// resource's decoder skip a scheme that does not know it.
	obj, got, err := decoder.Decode(data, &gvk, t.Storage.New())
	var warnings []string
	if strictErr, ok := runtime.AsStrictDecodingError(err); ok && validation != metav1.FieldValidationStrict {
		// The object decoded; what strict decoding objects to is only
		// reported.
		for _, e := range strictErr.Errors() {
			warnings = append(warnings, e.Error())
		}
		err = nil
	}
	if err != nil {
		if runtime.IsStrictDecodingError(err) {
			return nil, nil, apierrors.NewBadRequest(err.Error())
		}
		return nil, nil, fmt.Errorf("decoding %s: %w", gvk.Kind, manifest.DecodeError(err))
	}
	if got.GroupVersion() != t.GroupVersion() || got.Kind != gvk.Kind {
		return nil, nil, fmt.Errorf("%s is not a %s", got, gvk)
	}
	return obj, warnings, nil
}

// WriteOptions apply to every write.
type WriteOptions struct {
	// DryRun runs defaulting, strategies and validation, and writes nothing.
	DryRun bool
	// Namespaces, when set, remembers the namespaces found to exist, so that
	// many writes into one namespace look it up once.
	Namespaces *NamespaceCache
	// CurrentVersion makes Update read the stored resourceVersion for an
	// object that carries none, instead of writing without a precondition.
	CurrentVersion bool
	// FieldManager is the manager a write records in managedFields, as
	// kubectl's --field-manager names it; empty is DefaultFieldManager.
	FieldManager string
	// DropUnknownFields writes over stored values that hold fields this
	// release's types do not declare, dropping them as this release's
	// kube-apiserver would; without it such a write is refused
	// (LossError). A value stored at a newer version is refused either
	// way.
	DropUnknownFields bool
	// LossCheckedAt, when set, is a revision at which every value the
	// write may go over was checked for what it would lose, as a scan
	// with Options.Losses checks them (a migration's): a value not
	// written since is not read again.
	LossCheckedAt int64
}

// BypassWarning is said once per write command that writes (not on a dry
// run, which writes nothing): regctl writes what the
// stores write, and nothing in front of them runs.
const BypassWarning = "warning: regctl writes straight to etcd through the apiserver's stores: admission plugins (but for namespace lifecycle), webhooks and authorization do not run"

// DefaultFieldManager is the manager regctl's writes are recorded as when
// none is named: where the server takes the client's user agent, regctl
// names itself.
const DefaultFieldManager = "regctl"

func (o WriteOptions) manager() string {
	if o.FieldManager == "" {
		return DefaultFieldManager
	}
	return o.FieldManager
}

// NamespaceCache looks up namespaces through the namespaces store, as the
// server's NamespaceLifecycle admission does, and remembers the ones it
// found for the length of a command. A namespace not found is not
// remembered: a manifest may create it before the objects that live in it.
type NamespaceCache struct {
	namespaces *handle.Handle
	found      sync.Map // name → *api.Namespace
}

// NewNamespaceCache looks namespaces up through the handle of "namespaces".
func NewNamespaceCache(namespaces *handle.Handle) *NamespaceCache {
	return &NamespaceCache{namespaces: namespaces}
}

func (c *NamespaceCache) get(name string) (*api.Namespace, bool) {
	if c == nil {
		return nil, false
	}
	ns, ok := c.found.Load(name)
	if !ok {
		return nil, false
	}
	return ns.(*api.Namespace), true
}

func (c *NamespaceCache) add(ns *api.Namespace) {
	if c != nil {
		c.found.Store(ns.Name, ns)
	}
}

// Namespace is the namespace name as the namespaces store holds it, nil
// when there is none: looked up once, then remembered.
func (c *NamespaceCache) Namespace(ctx context.Context, name string) (*api.Namespace, error) {
	if ns, ok := c.get(name); ok {
		return ns, nil
	}
	got, err := GetInternal(ctx, handle.Target{Handle: c.namespaces}, name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	ns, ok := got.(*api.Namespace)
	if !ok {
		return nil, fmt.Errorf("reading namespace %s: got a %T", name, got)
	}
	c.add(ns)
	return ns, nil
}

// Assume remembers ns as existing, as a dry run that would have created it
// checks what would be written into it.
func (c *NamespaceCache) Assume(ns *api.Namespace) { c.add(ns) }

func (o WriteOptions) dryRun() []string {
	if o.DryRun {
		return []string{metav1.DryRunAll}
	}
	return nil
}

// Create writes a new object through the target's store: generateName, uid,
// creationTimestamp and generation, the resource's PrepareForCreate and
// Validate, encoding in the storage version, encryption, and a TTL lease for
// events. It returns the stored object in the served version.
func Create(ctx context.Context, t handle.Target, obj runtime.Object, opts WriteOptions) (runtime.Object, error) {
	creater, ok := t.Storage.(rest.Creater)
	if !ok {
		return nil, unwritten(fmt.Errorf("%s does not accept create", t.Path))
	}
	if err := checkNamespace(ctx, t, obj, true, opts.Namespaces); err != nil {
		return nil, unwritten(err)
	}
	if usesClusterIP(obj) {
		if err := t.ReadyAllocators(ctx); err != nil {
			return nil, unwritten(err)
		}
	}
	// The create handler runs the field manager on what it is given, the
	// store then writes what that returns.
	fm, err := t.FieldManager()
	if err != nil {
		return nil, unwritten(err)
	}
	if obj, err = fm.Create(obj, opts.manager()); err != nil {
		return nil, unwritten(err)
	}
	out, err := creater.Create(RequestContext(ctx, t), obj, rest.ValidateAllObjectFunc, &metav1.CreateOptions{DryRun: opts.dryRun(), FieldManager: opts.manager()})
	if err != nil && !opts.DryRun && OutcomeOf(ctx, err) == Uncertain {
		// The store gave obj its uid: what etcd holds says whether the
		// create happened.
		out, err = settleCreate(ctx, t, obj, err)
	}
	if err != nil {
		return nil, inFieldOrder(err)
	}
	return ToExternal(t, out)
}

// ReadyAllocatorsFor readies what a write of obj through t allocates from,
// as Create does, for a write that reaches t's store another way (the
// server's request handlers): a service's cluster IP allocator.
func ReadyAllocatorsFor(ctx context.Context, t handle.Target, obj runtime.Object) error {
	if usesClusterIP(obj) {
		return t.ReadyAllocators(ctx)
	}
	return nil
}

// usesClusterIP tells whether obj is a service that has or gets a cluster
// IP: writing or deleting it allocates or releases one through the
// allocator its handle readies.
func usesClusterIP(obj runtime.Object) bool {
	svc, ok := obj.(*api.Service)
	return ok && svc.Spec.Type != api.ServiceTypeExternalName && svc.Spec.ClusterIP != api.ClusterIPNone
}

// readiesAllocators readies the target's allocators inside the store's
// update, where the stored object is known, when the update may allocate or
// release a cluster IP. Most updates keep the IPs they have, and need no
// allocator, as on the server.
func readiesAllocators(t handle.Target) rest.TransformFunc {
	return func(ctx context.Context, newObj, oldObj runtime.Object) (runtime.Object, error) {
		if changesClusterIPs(newObj, oldObj) {
			if err := t.ReadyAllocators(ctx); err != nil {
				return nil, unwritten(err)
			}
		}
		return newObj, nil
	}
}

// changesClusterIPs tells whether an update of oldObj to newObj may allocate
// or release a cluster IP: when one has a cluster IP and the other not, or
// when their IPs or IP families differ (a second family added or dropped).
// A field the new object leaves empty counts as a change: the store fills it
// in from the old one, but that is the store's to decide.
func changesClusterIPs(newObj, oldObj runtime.Object) bool {
	newSvc, ok := newObj.(*api.Service)
	oldSvc, _ := oldObj.(*api.Service)
	switch {
	case !ok || oldSvc == nil:
		return ok && usesClusterIP(newSvc)
	case usesClusterIP(newSvc) != usesClusterIP(oldSvc):
		return true
	case !usesClusterIP(newSvc):
		return false
	}
	n, o := newSvc.Spec, oldSvc.Spec
	return n.IPFamilyPolicy == nil || o.IPFamilyPolicy == nil || *n.IPFamilyPolicy != *o.IPFamilyPolicy ||
		!slices.Equal(n.IPFamilies, o.IPFamilies) || !slices.Equal(n.ClusterIPs, o.ClusterIPs)
}

// Update replaces an object through the target's store (a subresource's
// store for status and the like). The object's resourceVersion is the
// precondition: a stale one fails with Conflict and nothing is written.
// With opts.CurrentVersion, an object that carries none takes the one
// stored now. A stored value this release would lose part of is not
// written over (LossError).
func Update(ctx context.Context, t handle.Target, obj runtime.Object, opts WriteOptions) (runtime.Object, error) {
	updater, ok := t.Storage.(rest.Updater)
	if !ok {
		return nil, unwritten(fmt.Errorf("%s does not accept update", t.Path))
	}
	if err := checkNamespace(ctx, t, obj, false, opts.Namespaces); err != nil {
		return nil, unwritten(err)
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, unwritten(err)
	}
	if m.GetResourceVersion() == "" && opts.CurrentVersion {
		current, err := GetInternal(ctx, t, m.GetName())
		if err != nil {
			return nil, unwritten(err)
		}
		cm, err := meta.Accessor(current)
		if err != nil {
			return nil, unwritten(err)
		}
		m.SetResourceVersion(cm.GetResourceVersion())
	}
	fm, err := t.FieldManager()
	if err != nil {
		return nil, unwritten(err)
	}
	// The update handler's first transform: the field manager, on the
	// object as stored, which keeps its managedFields when the new one
	// carries none.
	manageFields := func(_ context.Context, newObj, liveObj runtime.Object) (runtime.Object, error) {
		return fm.UpdateNoErrors(liveObj, newObj, opts.manager()), nil
	}
	out, _, err := updater.Update(RequestContext(ctx, t), m.GetName(), rest.DefaultUpdatedObjectInfo(obj, refusesLoss(t, opts), manageFields, readiesAllocators(t)),
		rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{DryRun: opts.dryRun(), FieldManager: opts.manager()})
	if err != nil {
		return nil, inFieldOrder(err)
	}
	return ToExternal(t, out)
}

// checkNamespace does what the apiserver does around a namespaced write:
// the object lands in the request's namespace (or says the same one), and,
// as the NamespaceLifecycle admission plugin insists, that namespace exists
// and, for a create, is not being deleted. It is the one admission check
// regctl keeps: without it a write would strand an object in a namespace
// nobody can see.
func checkNamespace(ctx context.Context, t handle.Target, obj runtime.Object, creating bool, cache *NamespaceCache) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	if err := rest.EnsureObjectNamespaceMatchesRequestNamespace(rest.ExpectedNamespaceForScope(t.Namespace, t.Resource.Namespaced), m); err != nil {
		return err
	}
	if !t.Resource.Namespaced || t.Namespace == "" {
		return nil
	}
	if cache == nil {
		return errors.New("a namespaced write needs WriteOptions.Namespaces")
	}
	return cache.allows(ctx, t.Namespace, creating, schema.GroupResource{Resource: t.Path}, m.GetName())
}

// allows is what the NamespaceLifecycle admission plugin asks of a write
// of name into namespace: that it exists, and for a create, that it is not
// being deleted.
func (c *NamespaceCache) allows(ctx context.Context, namespace string, creating bool, gr schema.GroupResource, name string) error {
	ns, ok := c.get(namespace)
	if !ok {
		got, err := GetInternal(ctx, handle.Target{Handle: c.namespaces}, namespace)
		if err != nil {
			return err
		}
		if ns, ok = got.(*api.Namespace); !ok {
			return fmt.Errorf("reading namespace %s: got a %T", namespace, got)
		}
		c.add(ns)
	}
	if creating && ns.Status.Phase == api.NamespaceTerminating {
		return apierrors.NewForbidden(gr, name, fmt.Errorf("unable to create new content in namespace %s because it is being terminated", namespace))
	}
	return nil
}
