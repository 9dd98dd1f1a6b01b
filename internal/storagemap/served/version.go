// Package served holds the group versions of the storage map as
// kube-apiserver installs them: each version's storage, names, discovery,
// codecs, field managers and warnings, the server's installer that reads
// its discovery back, and the route records joined from them.
package served

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	restful "github.com/emicklei/go-restful/v3"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storagemap/wiring"
)

// Version is one group version of the map as the server installs it.
type Version struct {
	GV schema.GroupVersion
	// Preferred is the group's preferred version, the one kubectl picks
	// when a user names a resource without a version.
	Preferred bool
	// Stores is the version's storage map, by the installer's path
	// ("deployments", "deployments/status").
	Stores map[string]rest.Storage
	// Names are the version's resources as kubectl's RESTMapper needs
	// them (names, kinds, scope, short names, categories), read from the
	// storage the way the installer reads them, without installing it.
	Names []metav1.APIResource
	// Resources is the server's discovery of the version, one entry per
	// path, with group and version always filled in; nil until the version
	// is installed.
	Resources []metav1.APIResource
	// Codec is how the version's objects are decoded and converted.
	Codec handle.Codec
	// Codecs, when set, is the codec of each path instead: the custom
	// resources of one version come from several CRDs, each with its own.
	Codecs map[string]handle.Codec
	// FieldManagers are, for custom resources, the field manager of each
	// path, which the CRD handler builds; a built-in group's are built
	// from Info when a write needs them.
	FieldManagers map[string]*handle.FieldManager
	// Warnings are, for custom resources, the warnings the CRD handler
	// adds to every request to each path: its CRD version's deprecation
	// warning. A built-in group's come from its kinds (PathWarnings).
	Warnings map[string][]string
	// CRDs name, for custom resources, the CRD of each path: a version's
	// Stores are its route storage (see the extensions package) until a
	// command reads or writes the CRD's objects (extensions.Serving).
	CRDs map[string]string
	// Partial says Resources covers some of the version's resources only.
	Partial bool
	// Info is the group the version is installed from; nil for custom
	// resources, which the installer does not install (the CRD handler
	// serves them) and whose discovery is known from their CRD.
	Info *genericapiserver.APIGroupInfo
	// Root is where the version is served: /api for the core group,
	// /apis for the others.
	Root string
	// Provider is what made the version's storage (routes describe).
	Provider wiring.Provider
}

// Installer installs storage maps into one go-restful container with the
// apiserver's own installer, as a server does for every group version, and
// reads back the discovery each one serves. Verbs, kinds, short names,
// categories and storage version hashes are therefore the server's, not
// re-derived.
type Installer struct {
	Container *restful.Container
	// equivalent is shared by every group version, as the server's one
	// EquivalentResourceRegistry is.
	equivalent runtime.EquivalentResourceRegistry
	// What the installed handlers serve a request with, as the server's
	// do: each group's type converter for its field managers (built on
	// first use), the admission regctl keeps (namespace lifecycle) and the
	// authorizer a create on update asks.
	typeConverter func(*genericapiserver.APIGroupInfo) managedfields.TypeConverter
	admission     admission.Interface
	authorizer    authorizer.Authorizer
}

func NewInstaller(models *Models, admit admission.Interface, authz authorizer.Authorizer) *Installer {
	converters := map[*genericapiserver.APIGroupInfo]*lazyTypeConverter{}
	var mu sync.Mutex
	return &Installer{
		Container: restful.NewContainer(), equivalent: runtime.NewEquivalentResourceRegistry(),
		typeConverter: func(info *genericapiserver.APIGroupInfo) managedfields.TypeConverter {
			mu.Lock()
			defer mu.Unlock()
			tc, ok := converters[info]
			if !ok {
				tc = &lazyTypeConverter{build: func() (managedfields.TypeConverter, error) { return models.typeConverter(info) }}
				converters[info] = tc
			}
			return tc
		},
		admission: admit, authorizer: authz,
	}
}

// VersionsOf lists every version of a group that has storage, in the
// group's priority order, as GenericAPIServer.installAPIResources goes
// through them, with their names but not installed. The preferred version
// is the first priority, as the server's group discovery says, whether or
// not it has storage.
func VersionsOf(info *genericapiserver.APIGroupInfo, provider wiring.Provider) ([]Version, error) {
	root := genericapiserver.APIGroupPrefix
	if len(info.PrioritizedVersions) > 0 && info.PrioritizedVersions[0].Group == "" {
		root = genericapiserver.DefaultLegacyAPIPrefix
	}
	var out []Version
	for i, gv := range info.PrioritizedVersions {
		stores := info.VersionedResourcesStorageMap[gv.Version]
		if len(stores) == 0 {
			continue
		}
		names, err := namesOf(info, gv)
		if err != nil {
			return nil, err
		}
		out = append(out, Version{GV: gv, Preferred: i == 0, Stores: stores, Names: names, Codec: GroupCodec(info, gv.Group), Info: info, Root: root, Provider: provider})
	}
	return out, nil
}

// namesOf reads what name resolution needs of each path the way the
// installer's registerResourceHandlers reads it: the kind from
// endpoints.GetResourceKind, scope from the resource's Scoper, short names,
// categories, singular name and a subresource's kind from the storage's
// providers. TestNamesAreTheInstallersOwn holds it to the installer's
// discovery.
func namesOf(info *genericapiserver.APIGroupInfo, gv schema.GroupVersion) ([]metav1.APIResource, error) {
	stores := info.VersionedResourcesStorageMap[gv.Version]
	out := make([]metav1.APIResource, 0, len(stores))
	for p, storage := range stores {
		gvk, err := endpoints.GetResourceKind(gv, storage, info.Scheme)
		if err != nil {
			return nil, fmt.Errorf("reading the kind of %s in %s: %w", p, gv, err)
		}
		resource, _, isSub := strings.Cut(p, "/")
		r := metav1.APIResource{Name: p, Kind: gvk.Kind, Group: gv.Group, Version: gv.Version}
		if scoper, ok := stores[resource].(rest.Scoper); ok {
			r.Namespaced = scoper.NamespaceScoped()
		}
		if s, ok := storage.(rest.ShortNamesProvider); ok {
			r.ShortNames = s.ShortNames()
		}
		if c, ok := storage.(rest.CategoriesProvider); ok {
			r.Categories = c.Categories()
		}
		if s, ok := storage.(rest.SingularNameProvider); ok && !isSub {
			r.SingularName = s.GetSingularName()
		}
		if k, ok := storage.(rest.GroupVersionKindProvider); ok {
			kgvk := k.GroupVersionKind(gv)
			r.Group, r.Version, r.Kind = kgvk.Group, kgvk.Version, kgvk.Kind
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Install installs v with the apiserver's installer and keeps the
// discovery it serves: the whole version when resources is nil, else only
// those resources and their subresources, into a container of their own
// (the map's container takes whole versions only, as a server's does). A
// custom resource version has its discovery from its CRDs already: it is
// not installed (the CRD handler serves it).
func (in *Installer) Install(v *Version, resources []string) error {
	if v.Info == nil {
		return nil
	}
	stores, container := v.Stores, in.Container
	if resources != nil {
		stores = map[string]rest.Storage{}
		for p, s := range v.Stores {
			if base, _, _ := strings.Cut(p, "/"); slices.Contains(resources, base) {
				stores[p] = s
			}
		}
		container = restful.NewContainer()
	}
	list, err := in.installVersion(v.Info, v.GV, v.Root, stores, container)
	if err != nil {
		return err
	}
	installed := make([]metav1.APIResource, len(list.APIResources))
	for j, r := range list.APIResources {
		// Discovery leaves group and version empty when they are the
		// list's.
		if r.Group == "" && r.Version == "" {
			r.Group, r.Version = v.GV.Group, v.GV.Version
		}
		installed[j] = r
	}
	v.Resources, v.Partial = installed, resources != nil
	return nil
}

// Installed is the part of v's storage map that is installed.
func (v *Version) Installed() map[string]rest.Storage {
	if !v.Partial {
		return v.Stores
	}
	out := map[string]rest.Storage{}
	for _, r := range v.Resources {
		out[r.Name] = v.Stores[r.Name]
	}
	return out
}

// installVersion is GenericAPIServer.getAPIGroupVersion and InstallREST for
// one version, with nothing a served request needs beyond discovery.
func (in *Installer) installVersion(info *genericapiserver.APIGroupInfo, gv schema.GroupVersion, root string, stores map[string]rest.Storage, container *restful.Container) (*metav1.APIResourceList, error) {
	served := map[string][]string{}
	for version, resources := range info.VersionedResourcesStorageMap {
		for resource := range resources {
			served[resource] = append(served[resource], schema.GroupVersion{Group: gv.Group, Version: version}.String())
		}
	}
	group := &endpoints.APIGroupVersion{
		Root:                        root,
		GroupVersion:                gv,
		AllServedVersionsByResource: served,
		Storage:                     stores,
		MetaGroupVersion:            info.MetaGroupVersion,
		OptionsExternalVersion:      info.OptionsExternalVersion,

		ParameterCodec:        info.ParameterCodec,
		Serializer:            info.NegotiatedSerializer,
		Creater:               info.Scheme,
		Convertor:             info.Scheme,
		ConvertabilityChecker: info.Scheme,
		UnsafeConvertor:       runtime.UnsafeObjectConvertor(info.Scheme),
		Defaulter:             info.Scheme,
		Typer:                 info.Scheme,
		Namer:                 runtime.Namer(meta.NewAccessor()),
		TypeConverter:         in.typeConverter(info),
		Admit:                 in.admission,
		Authorizer:            in.authorizer,

		EquivalentResourceRegistry: in.equivalent,
		MinRequestTimeout:          time.Minute,
	}
	if _, _, err := group.InstallREST(container); err != nil {
		return nil, fmt.Errorf("installing %s: %w", gv, err)
	}
	path := root + "/" + gv.String()
	rec := httptest.NewRecorder()
	container.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("reading %s discovery: status %d: %s", path, rec.Code, rec.Body.String())
	}
	var list metav1.APIResourceList
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
		return nil, fmt.Errorf("reading %s discovery: %w", path, err)
	}
	return &list, nil
}
