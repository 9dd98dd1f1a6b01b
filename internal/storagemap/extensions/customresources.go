package extensions

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apiextensionsinformers "k8s.io/apiextensions-apiserver/pkg/client/informers/externalversions"
	apiextensionsoptions "k8s.io/apiextensions-apiserver/pkg/cmd/server/options"
	"k8s.io/apiextensions-apiserver/pkg/controller/finalizer"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/unstructuredscheme"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/discovery"
	"k8s.io/apiserver/pkg/endpoints/handlers"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	restclient "k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storagemap/reach"
	"github.com/regctl/regctl/internal/storagemap/restoptions"
	"github.com/regctl/regctl/internal/storagemap/served"
	"github.com/regctl/regctl/internal/storagemap/wiring"
)

// customResources are the served versions of every established CRD stored
// in etcd, with their names and discovery, derived from the CRDs alone, and
// their routes: each version's storage as the CRD handler builds it, but
// for what only serving takes (see routeStorage), behind the server's
// custom resource RESTOptionsGetter, whose decisions the routes record.
// What serving a CRD takes (its schemas, validators, CEL programs, codecs
// and field managers) is built only when a command reads or writes its
// objects, as the CRD handler builds it on the first request for it
// (Serving). The CRDs are read once (readCRDs); nothing is watched or
// started.
func (c Chain) customResources(ctx context.Context, crdVersions []served.Version) ([]served.Version, *Serving, error) {
	crds, err := c.readCRDs(ctx, crdVersions, func(crd *apiextensionsv1.CustomResourceDefinition) {
		for _, v := range crd.Spec.Versions {
			if v.Served {
				c.NotEstablished[schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}] = crd.Name
			}
		}
	})
	if err != nil || len(crds) == 0 {
		return nil, nil, err
	}
	storageVersions := map[schema.GroupResource]schema.GroupVersion{}
	for _, crd := range crds {
		storageVersion, err := apihelpers.GetCRDStorageVersion(crd)
		if err != nil {
			return nil, nil, fmt.Errorf("reading customresourcedefinition %s: %w", crd.Name, err)
		}
		storageVersions[schema.GroupResource{Group: crd.Spec.Group, Resource: crd.Status.AcceptedNames.Plural}] = schema.GroupVersion{Group: crd.Spec.Group, Version: storageVersion}
	}
	getter := c.Getter.ForServer(apiextensionsoptions.NewCRDRESTOptionsGetter(c.Etcd, c.Transformers, nil), nil)
	// A custom resource store asks for its options with no example: its
	// storage version is its CRD's, and an object of it shows the media
	// type the server's codec writes.
	getter.CustomResource = func(gr schema.GroupResource) (runtime.Object, string, bool) {
		gv, ok := storageVersions[gr]
		if !ok {
			return nil, "", false
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gv.WithKind("Example"))
		return u, gv.String(), true
	}
	serving := &Serving{getter: getter, admission: c.Admission, authorizer: c.Authorizer, read: func(name string) (*apiextensionsv1.CustomResourceDefinition, error) {
		if crd, ok := c.MadeUp[name]; ok {
			return crd, nil
		}
		return readCRD(context.Background(), crdVersions, name, c.CRDRevision)
	}, static: sync.OnceValues(func() (map[string]*spec.Schema, error) {
		if !c.FieldManagement {
			return nil, nil
		}
		return c.staticOpenAPISpec(crdVersions)
	})}
	var out []served.Version
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			version, err := crVersion(crd, v.Name, getter)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, version)
		}
	}
	return mergeCRVersions(out), serving, nil
}

// staticOpenAPISpec is the apiextensions server's static OpenAPI spec, which
// kube-apiserver hands its CRD handler: the models GenericAPIServer builds
// when it installs the apiextensions group (the CRD kinds and what they
// refer to, ObjectMeta among them). The handler merges each CRD's schema
// into them to build its field managers' type converter; nil when
// --runtime-config leaves the group out.
func (c Chain) staticOpenAPISpec(crdVersions []served.Version) (map[string]*spec.Schema, error) {
	for _, v := range crdVersions {
		if v.Info != nil && v.GV.Group == apiextensions.GroupName {
			return c.Models.ForGroup(v.Info)
		}
	}
	return nil, nil
}

// crdHandler is the apiextensions server's CRD handler on an informer that
// is never started: its indexer holds crd, which is all the handler's
// lister reads. What only serving or controllers use is left out:
// discovery handlers, the delegate, admission, the establishing controller
// and the authorizer. With no static OpenAPI spec its field managers use
// the deduced type converter, as the server's would. A handler of its own
// per CRD, which nothing else refers to, lets what it builds go when its
// caller lets it go.
func crdHandler(client apiextensionsclient.Interface, crd *apiextensionsv1.CustomResourceDefinition, getter *restoptions.Getter, static map[string]*spec.Schema, admit admission.Interface, authz authorizer.Authorizer) (crdServingInfo, error) {
	informer := apiextensionsinformers.NewSharedInformerFactory(client, 0).Apiextensions().V1().CustomResourceDefinitions()
	if err := informer.Informer().GetIndexer().Add(crd); err != nil {
		return nil, err
	}
	h, err := apiextensionsapiserver.NewCustomResourceDefinitionHandler(nil, nil, informer, nil, getter, admit, nil, noWebhooks{}, nil, 1, authz, 0, time.Minute, static, 0)
	if err != nil {
		return nil, fmt.Errorf("creating the custom resource handler: %w", err)
	}
	return h, nil
}

// Serving builds what serving a CRD's custom resources takes, with the
// apiextensions server's CRD handler, one CRD at a time.
type Serving struct {
	getter *restoptions.Getter
	// read reads a CRD whole: the map holds them without their schemas.
	read func(name string) (*apiextensionsv1.CustomResourceDefinition, error)
	// static is the static OpenAPI spec the handler builds field managers
	// on, built for the first CRD that needs it.
	static func() (map[string]*spec.Schema, error)

	// admission and authorizer are what the handler serves requests
	// with (see served.Installer).
	admission  admission.Interface
	authorizer authorizer.Authorizer

	mu     sync.Mutex
	client apiextensionsclient.Interface
	// built names the CRD of each build, in order (Built).
	built []string
	// handlers are the CRD handlers built last, by CRD name, which serve
	// their custom resources' requests to the map (the loopback client's).
	handlers map[string]http.Handler
}

// Build builds crd's serving info, every served version's storage, codecs,
// field managers and warnings, as the handler does on a CRD's first
// request, and returns them by version name.
func (b *Serving) Build(name string) (map[string]served.Version, error) {
	crd, err := b.read(name)
	if err != nil {
		return nil, err
	}
	client, err := b.handlerClient()
	if err != nil {
		return nil, err
	}
	static, err := b.static()
	if err != nil {
		return nil, err
	}
	handler, err := crdHandler(client, crd, b.getter, static, b.admission, b.authorizer)
	if err != nil {
		return nil, err
	}
	if _, err := handler.GetCustomResourceListerCollectionDeleter(crd); err != nil {
		return nil, fmt.Errorf("building the storage of customresourcedefinition %s: %w", crd.Name, err)
	}
	storages, scopes, warnings, err := servingInfo(handler, crd.UID)
	if err != nil {
		return nil, err
	}
	out := map[string]served.Version{}
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		version := served.Version{
			GV:            schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name},
			Stores:        map[string]rest.Storage{},
			Codecs:        map[string]handle.Codec{},
			FieldManagers: map[string]*handle.FieldManager{},
			Warnings:      map[string][]string{},
			Provider:      crdHandlerProvider,
		}
		if err := servedPaths(crd, v.Name, storages[v.Name], scopes, warnings[v.Name], &version); err != nil {
			return nil, err
		}
		out[v.Name] = version
	}
	b.mu.Lock()
	b.built = append(b.built, crd.Name)
	if h, ok := handler.(http.Handler); ok {
		if b.handlers == nil {
			b.handlers = map[string]http.Handler{}
		}
		b.handlers[crd.Name] = h
	}
	b.mu.Unlock()
	return out, nil
}

// Handler is the CRD handler built last for the CRD name, nil when none
// is.
func (b *Serving) Handler(name string) http.Handler {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.handlers[name]
}

// Built names the CRDs whose serving was built, in order: what a command
// paid for.
func (b *Serving) Built() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.built)
}

// handlerClient is the client the handlers' informers are made with,
// which none of them starts: it never connects.
func (b *Serving) handlerClient() (apiextensionsclient.Interface, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.client == nil {
		client, err := apiextensionsclient.NewForConfig(&restclient.Config{Host: "https://127.0.0.1:1"})
		if err != nil {
			return nil, err
		}
		b.client = client
	}
	return b.client, nil
}

// noWebhooks is the service resolver of conversion webhooks: regctl has no
// cluster network to reach them by, and says so when a read or write
// needs one (a version other than the stored one of a CRD whose
// conversion is a webhook).
type noWebhooks struct{}

func (noWebhooks) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	return nil, fmt.Errorf("converting through the webhook of service %s/%s:%d: regctl calls no webhooks; read or write the CRD's storage version", namespace, name, port)
}

// crdServingInfo is the exported face of the apiextensions crdHandler,
// whose type is not.
type crdServingInfo interface {
	GetCustomResourceListerCollectionDeleter(*apiextensionsv1.CustomResourceDefinition) (finalizer.ListerCollectionDeleter, error)
}

// crScopes are the request scopes the CRD handler built for a CRD's
// versions: the resource's, its status' and its scale's.
type crScopes struct {
	resource, status, scale map[string]*handlers.RequestScope
}

// servingInfo reads back what the CRD handler built for a CRD: every
// version's storage and request scopes, and the warnings it adds to each
// request to a version (a deprecated version's). The handler keeps them
// unexported (customStorage, an atomic.Value holding a map by CRD UID of
// *crdInfo) and hands out the storage version's store alone. Reading the fields by
// name, each checked against its type, lets regctl use what the server
// built instead of copying getOrCreateServingInfoFor; a change upstream
// fails here, loudly, not later.
func servingInfo(handler any, uid types.UID) (map[string]customresource.CustomResourceStorage, crScopes, map[string][]string, error) {
	h := reflect.ValueOf(handler)
	if h.Kind() != reflect.Pointer || h.Elem().Kind() != reflect.Struct {
		return nil, crScopes{}, nil, fmt.Errorf("regctl bug: the CRD handler is a %T", handler)
	}
	cache, err := fieldOf[atomic.Value](h.Elem(), "customStorage")
	if err != nil {
		return nil, crScopes{}, nil, err
	}
	byUID := reflect.ValueOf(cache.Load())
	if byUID.Kind() != reflect.Map || byUID.Type().Key() != reflect.TypeFor[types.UID]() {
		return nil, crScopes{}, nil, fmt.Errorf("regctl bug: the CRD handler's storage map is a %s", byUID.Type())
	}
	info := byUID.MapIndex(reflect.ValueOf(uid))
	if !info.IsValid() || info.Kind() != reflect.Pointer || info.IsNil() {
		return nil, crScopes{}, nil, fmt.Errorf("regctl bug: the CRD handler built no storage for CRD %s", uid)
	}
	storages, err := fieldOf[map[string]customresource.CustomResourceStorage](info.Elem(), "storages")
	if err != nil {
		return nil, crScopes{}, nil, err
	}
	var scopes crScopes
	for _, f := range []struct {
		name string
		to   *map[string]*handlers.RequestScope
	}{{"requestScopes", &scopes.resource}, {"statusRequestScopes", &scopes.status}, {"scaleRequestScopes", &scopes.scale}} {
		byVersion, err := fieldOf[map[string]*handlers.RequestScope](info.Elem(), f.name)
		if err != nil {
			return nil, crScopes{}, nil, err
		}
		*f.to = *byVersion
	}
	warnings, err := fieldOf[map[string][]string](info.Elem(), "warnings")
	if err != nil {
		return nil, crScopes{}, nil, err
	}
	return *storages, scopes, *warnings, nil
}

// fieldOf is a pointer to the named field of the addressable struct v,
// exported or not, when it has type T.
func fieldOf[T any](v reflect.Value, name string) (*T, error) {
	f := v.FieldByName(name)
	if !f.IsValid() || f.Type() != reflect.TypeFor[T]() || !f.CanAddr() {
		return nil, fmt.Errorf("regctl bug: %s.%s is not a %s in this apiextensions-apiserver", v.Type(), name, reflect.TypeFor[T]())
	}
	return (*T)(unsafe.Pointer(f.UnsafeAddr())), nil
}

// crVersion is one served version of a CRD as a version of the map: its
// discovery, and its route storage.
func crVersion(crd *apiextensionsv1.CustomResourceDefinition, name string, getter *restoptions.Getter) (served.Version, error) {
	storage, err := routeStorage(crd, name, getter)
	if err != nil {
		return served.Version{}, fmt.Errorf("building the routes of customresourcedefinition %s: %w", crd.Name, err)
	}
	plural := crd.Status.AcceptedNames.Plural
	stores := map[string]rest.Storage{plural: storage.CustomResource}
	if storage.Status != nil {
		stores[plural+"/status"] = &crStatus{storage.Status}
	}
	if storage.Scale != nil {
		stores[plural+"/scale"] = &crScale{storage.Scale}
	}
	crds := map[string]string{}
	for p := range stores {
		crds[p] = crd.Name
	}
	resources := crDiscovery(crd, name)
	return served.Version{
		GV:        schema.GroupVersion{Group: crd.Spec.Group, Version: name},
		Stores:    stores,
		Names:     resources,
		Resources: resources,
		CRDs:      crds,
		Provider:  crdHandlerProvider,
	}, nil
}

// crdHandlerProvider is what makes a custom resource's storage: the apiextensions
// server's CRD handler, in getOrCreateServingInfoFor.
var crdHandlerProvider = wiring.Provider{Value: apiextensionsapiserver.NewCustomResourceDefinitionHandler}

// routeStorage is the storage of version name of crd as the CRD handler's
// getOrCreateServingInfoFor makes it (customresource.NewStorage, behind the
// server's custom resource RESTOptionsGetter), less what only serving a
// request takes: no schema, validators, CEL programs, printer columns or
// conversion, but its selectable fields. Its paths, store, key functions and storage decisions are
// the served storage's; what it decodes is not, and nothing reads or
// writes through it.
func routeStorage(crd *apiextensionsv1.CustomResourceDefinition, name string, getter *restoptions.Getter) (customresource.CustomResourceStorage, error) {
	sub, err := apihelpers.GetSubresourcesForVersion(crd, name)
	if err != nil {
		return customresource.CustomResourceStorage{}, err
	}
	var status *apiextensions.CustomResourceSubresourceStatus
	var scale *apiextensions.CustomResourceSubresourceScale
	if sub != nil && sub.Status != nil {
		status = &apiextensions.CustomResourceSubresourceStatus{}
	}
	if sub != nil && sub.Scale != nil {
		scale = &apiextensions.CustomResourceSubresourceScale{}
		if err := apiextensionsv1.Convert_v1_CustomResourceSubresourceScale_To_apiextensions_CustomResourceSubresourceScale(sub.Scale, scale, nil); err != nil {
			return customresource.CustomResourceStorage{}, err
		}
	}
	names := crd.Status.AcceptedNames
	kind := schema.GroupVersionKind{Group: crd.Spec.Group, Version: name, Kind: names.Kind}
	// The version's selectable fields are what its store's attribute
	// function gives a field selector, as the CRD handler's strategy has them.
	var selectable []apiextensionsv1.SelectableField
	for _, v := range crd.Spec.Versions {
		if v.Name == name {
			selectable = v.SelectableFields
		}
	}
	strategy := customresource.NewStrategy(unstructuredscheme.NewUnstructuredObjectTyper(), crd.Spec.Scope == apiextensionsv1.NamespaceScoped, kind, nil, nil, nil, status, scale, selectable)
	resource := schema.GroupResource{Group: crd.Spec.Group, Resource: names.Plural}
	return customresource.NewStorage(resource, schema.GroupResource{Group: crd.Spec.Group, Resource: names.Singular},
		kind, kind.GroupVersion().WithKind(names.ListKind), strategy, withoutExample{getter}, names.Categories, rest.NewDefaultTableConvertor(resource), nil)
}

// withoutExample asks getter for a custom resource's options with no
// example, as the CRD handler's crdConversionRESTOptionsGetter asks the
// server's getter.
type withoutExample struct{ getter *restoptions.Getter }

func (w withoutExample) GetRESTOptions(resource schema.GroupResource, _ runtime.Object) (generic.RESTOptions, error) {
	return w.getter.GetRESTOptions(resource, nil)
}

// servedPaths adds to v the paths of version name of crd as the CRD
// handler built them: storages, codecs, field managers and warnings.
func servedPaths(crd *apiextensionsv1.CustomResourceDefinition, name string, s customresource.CustomResourceStorage, scopes crScopes, warnings []string, v *served.Version) error {
	scope := scopes.resource[name]
	if s.CustomResource == nil || scope == nil {
		return fmt.Errorf("regctl bug: the CRD handler built no storage for %s of customresourcedefinition %s", name, crd.Name)
	}
	codec := handle.Codec{
		Serializer:      scope.Serializer,
		Convertor:       scope.Convertor,
		UnsafeConvertor: scope.UnsafeConvertor,
		Hub:             scope.HubGroupVersion,
	}
	plural := crd.Status.AcceptedNames.Plural
	// The field managers are the ones the handler's create and update
	// run on each path.
	v.Stores[plural], v.Codecs[plural], v.FieldManagers[plural] = s.CustomResource, codec, scopeFieldManager(scope)
	// The handler adds the version's warnings to every request to it,
	// its subresources' too.
	v.Warnings[plural] = warnings
	if s.Status != nil {
		v.Warnings[plural+"/status"] = warnings
		v.Stores[plural+"/status"], v.Codecs[plural+"/status"] = &crStatus{s.Status}, codec
		v.FieldManagers[plural+"/status"] = scopeFieldManager(scopes.status[name])
	}
	if s.Scale != nil {
		// Its Scale kind is kube-apiserver's autoscaling/v1 (served.CodecFor).
		v.Warnings[plural+"/scale"] = warnings
		v.Stores[plural+"/scale"] = &crScale{s.Scale}
		v.FieldManagers[plural+"/scale"] = scopeFieldManager(scopes.scale[name])
	}
	return nil
}

// ServedHandle is the handle of route's path built for serving: route,
// with the storage, store, codec, field manager and warnings of versions
// (what Serving.Build returned for its CRD).
func ServedHandle(route *handle.Handle, versions map[string]served.Version) (*handle.Handle, error) {
	v := versions[route.Route.Version]
	p := route.Route.Resource
	if route.Route.Subresource != "" {
		p += "/" + route.Route.Subresource
	}
	storage, ok := v.Stores[p]
	if !ok {
		return nil, fmt.Errorf("the CRD of %s no longer serves it: it changed while regctl read it; run the command again", route.Path)
	}
	h := *route
	h.Serve = nil
	h.Storage = storage
	h.Store = reach.Of(v.Stores)[p].Store
	h.Codec = served.CodecFor(v, p, route.Resource)
	h.Warnings = v.Warnings[p]
	fm := v.FieldManagers[p]
	h.NewFieldManager = func() (*handle.FieldManager, error) {
		if fm == nil {
			return nil, fmt.Errorf("regctl bug: the CRD handler built no field manager for %s", route.Path)
		}
		return fm, nil
	}
	return &h, nil
}

// scopeFieldManager is the field manager of a request scope, with the
// creater and kind its create handler uses.
func scopeFieldManager(scope *handlers.RequestScope) *handle.FieldManager {
	if scope == nil || scope.FieldManager == nil {
		return nil
	}
	return &handle.FieldManager{FieldManager: scope.FieldManager, Creater: scope.Creater, Kind: scope.Kind}
}

// crDiscovery is the discovery the apiextensions server serves for one
// version of a CRD, as its DiscoveryController.sync writes it (which runs
// only as a controller on a started informer).
// TestExtensionServersAgreeWithKubeAPIServer in test/agreement holds it to
// the server's.
func crDiscovery(crd *apiextensionsv1.CustomResourceDefinition, name string) []metav1.APIResource {
	names := crd.Status.AcceptedNames
	namespaced := crd.Spec.Scope == apiextensionsv1.NamespaceScoped
	var hash string
	for _, v := range crd.Spec.Versions {
		if v.Served && v.Storage {
			hash = discovery.StorageVersionHash(crd.Spec.Group, v.Name, crd.Spec.Names.Kind)
		}
	}
	verbs := metav1.Verbs{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}
	if apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Terminating) {
		verbs = metav1.Verbs{"delete", "deletecollection", "get", "list", "watch"}
	}
	out := []metav1.APIResource{{
		Name: names.Plural, SingularName: names.Singular, Namespaced: namespaced,
		Group: crd.Spec.Group, Version: name, Kind: names.Kind, Verbs: verbs,
		ShortNames: names.ShortNames, Categories: names.Categories, StorageVersionHash: hash,
	}}
	sub, _ := apihelpers.GetSubresourcesForVersion(crd, name)
	if sub != nil && sub.Status != nil {
		out = append(out, metav1.APIResource{Name: names.Plural + "/status", Namespaced: namespaced,
			Group: crd.Spec.Group, Version: name, Kind: names.Kind, Verbs: metav1.Verbs{"get", "patch", "update"}})
	}
	if sub != nil && sub.Scale != nil {
		out = append(out, metav1.APIResource{Name: names.Plural + "/scale", Namespaced: namespaced,
			Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: metav1.Verbs{"get", "patch", "update"}})
	}
	return out
}

// mergeCRVersions joins the versions of CRDs of one group into one entry
// per group version, groups sorted by name and each group's versions in
// kube-aware order, whose first is the group's preferred version, as the
// apiextensions server's group discovery says.
func mergeCRVersions(in []served.Version) []served.Version {
	byGV := map[schema.GroupVersion]*served.Version{}
	var gvs []schema.GroupVersion
	for _, v := range in {
		m, ok := byGV[v.GV]
		if !ok {
			m = &served.Version{GV: v.GV, Stores: map[string]rest.Storage{}, CRDs: map[string]string{}, Provider: crdHandlerProvider}
			byGV[v.GV] = m
			gvs = append(gvs, v.GV)
		}
		maps.Copy(m.Stores, v.Stores)
		maps.Copy(m.CRDs, v.CRDs)
		m.Resources = append(m.Resources, v.Resources...)
		m.Names = m.Resources
	}
	slices.SortFunc(gvs, func(a, b schema.GroupVersion) int {
		if a.Group != b.Group {
			return strings.Compare(a.Group, b.Group)
		}
		// Highest first: v1 before v1beta1.
		return version.CompareKubeAwareVersionStrings(b.Version, a.Version)
	})
	out := make([]served.Version, 0, len(gvs))
	for i, gv := range gvs {
		v := *byGV[gv]
		v.Preferred = i == 0 || gvs[i-1].Group != gv.Group
		out = append(out, v)
	}
	return out
}

// crStatus and crScale make a custom resource's subresource storages
// rest.Storage, as the map holds every path: the CRD handler serves them
// itself and they have no Destroy. Their store is the resource's, which
// destroys it. Pointers, so that reach.Of walks through them to it.
// The route table names the server's storage they adapt (served.Adapter).
type (
	crStatus struct{ *customresource.StatusREST }
	crScale  struct{ *customresource.ScaleREST }
)

func (*crStatus) Destroy()        {}
func (*crScale) Destroy()         {}
func (s *crStatus) Upstream() any { return s.StatusREST }
func (s *crScale) Upstream() any  { return s.ScaleREST }
