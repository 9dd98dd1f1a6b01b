package wiring

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	restful "github.com/emicklei/go-restful/v3"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/endpoints"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
)

// servedVersion is one group version of the map as the server installs it.
type servedVersion struct {
	gv schema.GroupVersion
	// preferred is the group's preferred version, the one kubectl picks
	// when a user names a resource without a version.
	preferred bool
	// stores is the version's storage map, by the installer's path
	// ("deployments", "deployments/status").
	stores map[string]rest.Storage
	// resources is the server's discovery of the version, one entry per
	// path, with group and version always filled in.
	resources []metav1.APIResource
	// codec is how the version's objects are decoded and converted.
	codec Codec
	// codecs, when set, is the codec of each path instead: the custom
	// resources of one version come from several CRDs, each with its own.
	codecs map[string]Codec
}

// installer installs storage maps into one go-restful container with the
// apiserver's own installer, as a server does for every group version, and
// reads back the discovery each one serves. Verbs, kinds, short names,
// categories and storage version hashes are therefore the server's, not
// re-derived.
type installer struct {
	container *restful.Container
	// equivalent is shared by every group version, as the server's one
	// EquivalentResourceRegistry is.
	equivalent runtime.EquivalentResourceRegistry
}

func newInstaller() *installer {
	return &installer{container: restful.NewContainer(), equivalent: runtime.NewEquivalentResourceRegistry()}
}

// install installs every version of a group that has storage, in the
// group's priority order, as GenericAPIServer.installAPIResources does, and
// returns them in that order. The preferred version is the first priority,
// as the server's group discovery says, whether or not it has storage.
func (in *installer) install(info *genericapiserver.APIGroupInfo) ([]servedVersion, error) {
	root := genericapiserver.APIGroupPrefix
	if len(info.PrioritizedVersions) > 0 && info.PrioritizedVersions[0].Group == "" {
		root = genericapiserver.DefaultLegacyAPIPrefix
	}
	var out []servedVersion
	for i, gv := range info.PrioritizedVersions {
		stores := info.VersionedResourcesStorageMap[gv.Version]
		if len(stores) == 0 {
			continue
		}
		list, err := in.installVersion(info, gv, root)
		if err != nil {
			return nil, err
		}
		resources := make([]metav1.APIResource, len(list.APIResources))
		for j, r := range list.APIResources {
			// Discovery leaves group and version empty when they are the
			// list's.
			if r.Group == "" && r.Version == "" {
				r.Group, r.Version = gv.Group, gv.Version
			}
			resources[j] = r
		}
		out = append(out, servedVersion{gv: gv, preferred: i == 0, stores: stores, resources: resources, codec: groupCodec(info, gv.Group)})
	}
	return out, nil
}

// installVersion is GenericAPIServer.getAPIGroupVersion and InstallREST for
// one version, with nothing a served request needs beyond discovery.
func (in *installer) installVersion(info *genericapiserver.APIGroupInfo, gv schema.GroupVersion, root string) (*metav1.APIResourceList, error) {
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
		Storage:                     info.VersionedResourcesStorageMap[gv.Version],
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
		// Field management only matters when requests are served.
		TypeConverter:              managedfields.NewDeducedTypeConverter(),
		EquivalentResourceRegistry: in.equivalent,
		MinRequestTimeout:          time.Minute,
	}
	if _, _, err := group.InstallREST(in.container); err != nil {
		return nil, fmt.Errorf("installing %s: %w", gv, err)
	}
	path := root + "/" + gv.String()
	rec := httptest.NewRecorder()
	in.container.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("reading %s discovery: status %d: %s", path, rec.Code, rec.Body.String())
	}
	var list metav1.APIResourceList
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
		return nil, fmt.Errorf("reading %s discovery: %w", path, err)
	}
	return &list, nil
}
