package storagemap

import (
	"context"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/endpoints/discovery"
	"k8s.io/apiserver/pkg/endpoints/handlers"
	"k8s.io/apiserver/pkg/registry/rest"
	restclient "k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// customResources are the served versions of every established CRD stored
// in etcd, with their names and discovery, derived from the CRDs alone. Each
// builds its storage only when a command needs it (installer.install), with
// the apiextensions server's own CRD handler: its storages
// (customresource.NewStorage with the CRD's storage version, structural
// schema, subresources and printer columns, behind the server's custom
// resource RESTOptionsGetter and conversion codec) and its request scopes
// (serializers that default and prune, converters). The CRDs are read once
// through the CRD store of crdVersions; nothing is watched or started.
func (c chain) customResources(ctx context.Context, crdVersions []servedVersion) ([]servedVersion, error) {
	crds, err := readCRDs(ctx, crdVersions, func(crd *apiextensionsv1.CustomResourceDefinition) {
		for _, v := range crd.Spec.Versions {
			if v.Served {
				c.notEstablished[schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}] = crd.Name
			}
		}
	})
	if err != nil || len(crds) == 0 {
		return nil, err
	}
	storageVersions := map[schema.GroupResource]schema.GroupVersion{}
	for _, crd := range crds {
		storageVersion, err := apihelpers.GetCRDStorageVersion(crd)
		if err != nil {
			return nil, fmt.Errorf("reading customresourcedefinition %s: %w", crd.Name, err)
		}
		storageVersions[schema.GroupResource{Group: crd.Spec.Group, Resource: crd.Status.AcceptedNames.Plural}] = schema.GroupVersion{Group: crd.Spec.Group, Version: storageVersion}
	}
	getter := c.getter.forServer(apiextensionsoptions.NewCRDRESTOptionsGetter(c.etcd, c.transformers, nil), nil)
	// A custom resource store asks for its options with no example: its
	// storage version is its CRD's, and an object of it shows the media
	// type the server's codec writes.
	getter.customResource = func(gr schema.GroupResource) (runtime.Object, string, bool) {
		gv, ok := storageVersions[gr]
		if !ok {
			return nil, "", false
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gv.WithKind("Example"))
		return u, gv.String(), true
	}
	var static map[string]*spec.Schema
	if c.fieldManagement {
		if static, err = c.staticOpenAPISpec(crdVersions); err != nil {
			return nil, err
		}
	}
	handler, err := crdHandler(crds, getter, static)
	if err != nil {
		return nil, err
	}
	var out []servedVersion
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if v.Served {
				out = append(out, crVersion(handler, crd, v.Name))
			}
		}
	}
	return mergeCRVersions(out), nil
}

// readCRDs lists the CRDs through the CRD store, in v1, the established
// ones only: those the server serves. The others are told to pending.
func readCRDs(ctx context.Context, crdVersions []servedVersion, pending func(*apiextensionsv1.CustomResourceDefinition)) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	list, err := listStore(ctx, crdVersions, apiextensions.GroupName, "customresourcedefinitions")
	if err != nil || list == nil {
		return nil, err
	}
	internal, ok := list.(*apiextensions.CustomResourceDefinitionList)
	if !ok {
		return nil, fmt.Errorf("reading the customresourcedefinitions: got a %T", list)
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for i := range internal.Items {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := apiextensionsapiserver.Scheme.Convert(&internal.Items[i], crd, nil); err != nil {
			return nil, fmt.Errorf("reading customresourcedefinition %s: %w", internal.Items[i].Name, err)
		}
		if apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
			out = append(out, crd)
		} else {
			pending(crd)
		}
	}
	return out, nil
}

// staticOpenAPISpec is the apiextensions server's static OpenAPI spec, which
// kube-apiserver hands its CRD handler: the models GenericAPIServer builds
// when it installs the apiextensions group (the CRD kinds and what they
// refer to, ObjectMeta among them). The handler merges each CRD's schema
// into them to build its field managers' type converter; nil when
// --runtime-config leaves the group out.
func (c chain) staticOpenAPISpec(crdVersions []servedVersion) (map[string]*spec.Schema, error) {
	for _, v := range crdVersions {
		if v.info != nil && v.gv.Group == apiextensions.GroupName {
			return c.models.forGroup(v.info)
		}
	}
	return nil, nil
}

// crdHandler is the apiextensions server's CRD handler on an informer that
// is never started: its indexer holds the CRDs read, which is all the
// handler's lister reads. What only serving or controllers use is left
// out: discovery handlers, the delegate, admission, the establishing
// controller and the authorizer. With no static OpenAPI spec its field
// managers use the deduced type converter, as the server's would.
func crdHandler(crds []*apiextensionsv1.CustomResourceDefinition, getter *recordingGetter, static map[string]*spec.Schema) (crdServingInfo, error) {
	client, err := apiextensionsclient.NewForConfig(&restclient.Config{Host: "https://127.0.0.1:1"})
	if err != nil {
		return nil, err
	}
	informer := apiextensionsinformers.NewSharedInformerFactory(client, 0).Apiextensions().V1().CustomResourceDefinitions()
	for _, crd := range crds {
		if err := informer.Informer().GetIndexer().Add(crd); err != nil {
			return nil, err
		}
	}
	h, err := apiextensionsapiserver.NewCustomResourceDefinitionHandler(nil, nil, informer, nil, getter, nil, nil, noWebhooks{}, nil, 1, nil, 0, time.Minute, static, 0)
	if err != nil {
		return nil, fmt.Errorf("creating the custom resource handler: %w", err)
	}
	return h, nil
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
// discovery, and the build of its storages and codecs.
func crVersion(handler crdServingInfo, crd *apiextensionsv1.CustomResourceDefinition, name string) servedVersion {
	resources := crDiscovery(crd, name)
	return servedVersion{
		gv:            schema.GroupVersion{Group: crd.Spec.Group, Version: name},
		stores:        map[string]rest.Storage{},
		names:         resources,
		resources:     resources,
		codecs:        map[string]Codec{},
		fieldManagers: map[string]*FieldManager{},
		warnings:      map[string][]string{},
		builds: []func(*servedVersion) error{func(v *servedVersion) error {
			return buildCR(handler, crd, name, v)
		}},
	}
}

// buildCR builds the CRD's serving info, every version's storage included,
// as the handler does on a CRD's first request, and adds version name's
// paths and codecs to v. A CRD the handler cannot serve is left out, as the
// server serves the others; it says why with -v.
func buildCR(handler crdServingInfo, crd *apiextensionsv1.CustomResourceDefinition, name string, v *servedVersion) error {
	if _, err := handler.GetCustomResourceListerCollectionDeleter(crd); err != nil {
		klog.Warningf("leaving out the custom resources of customresourcedefinition %s: %v", crd.Name, err)
		return nil
	}
	storages, scopes, warnings, err := servingInfo(handler, crd.UID)
	if err != nil {
		return err
	}
	s, scope := storages[name], scopes.resource[name]
	if s.CustomResource == nil || scope == nil {
		return fmt.Errorf("regctl bug: the CRD handler built no storage for %s of customresourcedefinition %s", name, crd.Name)
	}
	codec := Codec{
		Serializer:      scope.Serializer,
		Convertor:       scope.Convertor,
		UnsafeConvertor: scope.UnsafeConvertor,
		Hub:             scope.HubGroupVersion,
	}
	plural := crd.Status.AcceptedNames.Plural
	// The field managers are the ones the handler's create and update
	// run on each path.
	v.stores[plural], v.codecs[plural], v.fieldManagers[plural] = s.CustomResource, codec, scopeFieldManager(scope)
	// The handler adds the version's warnings to every request to it,
	// its subresources' too.
	v.warnings[plural] = warnings[name]
	if s.Status != nil {
		v.warnings[plural+"/status"] = warnings[name]
		v.stores[plural+"/status"], v.codecs[plural+"/status"] = &crStatus{s.Status}, codec
		v.fieldManagers[plural+"/status"] = scopeFieldManager(scopes.status[name])
	}
	if s.Scale != nil {
		// Its Scale kind is kube-apiserver's autoscaling/v1 (codecFor).
		v.warnings[plural+"/scale"] = warnings[name]
		v.stores[plural+"/scale"] = &crScale{s.Scale}
		v.fieldManagers[plural+"/scale"] = scopeFieldManager(scopes.scale[name])
	}
	return nil
}

// scopeFieldManager is the field manager of a request scope, with the
// creater and kind its create handler uses.
func scopeFieldManager(scope *handlers.RequestScope) *FieldManager {
	if scope == nil || scope.FieldManager == nil {
		return nil
	}
	return &FieldManager{FieldManager: scope.FieldManager, Creater: scope.Creater, Kind: scope.Kind}
}

// build builds what a custom resource version defers until a command
// needs it.
func (v *servedVersion) build() error {
	for _, b := range v.builds {
		if err := b(v); err != nil {
			return err
		}
	}
	v.builds = nil
	return nil
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
func mergeCRVersions(in []servedVersion) []servedVersion {
	byGV := map[schema.GroupVersion]*servedVersion{}
	var gvs []schema.GroupVersion
	for _, v := range in {
		m, ok := byGV[v.gv]
		if !ok {
			m = &servedVersion{gv: v.gv, stores: map[string]rest.Storage{}, codecs: map[string]Codec{}, fieldManagers: map[string]*FieldManager{}, warnings: map[string][]string{}}
			byGV[v.gv] = m
			gvs = append(gvs, v.gv)
		}
		m.builds = append(m.builds, v.builds...)
		m.resources = append(m.resources, v.resources...)
		m.names = m.resources
	}
	slices.SortFunc(gvs, func(a, b schema.GroupVersion) int {
		if a.Group != b.Group {
			return strings.Compare(a.Group, b.Group)
		}
		// Highest first: v1 before v1beta1.
		return version.CompareKubeAwareVersionStrings(b.Version, a.Version)
	})
	out := make([]servedVersion, 0, len(gvs))
	for i, gv := range gvs {
		v := *byGV[gv]
		v.preferred = i == 0 || gvs[i-1].Group != gv.Group
		out = append(out, v)
	}
	return out
}

// crStatus and crScale make a custom resource's subresource storages
// rest.Storage, as the map holds every path: the CRD handler serves them
// itself and they have no Destroy. Their store is the resource's, which
// destroys it. Pointers, so that findOwners walks through them to it.
type (
	crStatus struct{ *customresource.StatusREST }
	crScale  struct{ *customresource.ScaleREST }
)

func (*crStatus) Destroy()        {}
func (*crScale) Destroy()         {}
func (s *crStatus) upstream() any { return s.StatusREST }
func (s *crScale) upstream() any  { return s.ScaleREST }
