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
	genericapiserver "k8s.io/apiserver/pkg/server"
)

// discover installs the storage map into a go-restful container with the
// apiserver's own installer, as a server does for /api/v1, and reads back the
// discovery document it serves. Verbs, kinds, short names, categories and
// storage version hashes are therefore the server's, not re-derived.
func discover(info *genericapiserver.APIGroupInfo) (*metav1.APIResourceList, error) {
	gv := schema.GroupVersion{Version: "v1"}
	storage := info.VersionedResourcesStorageMap[gv.Version]
	served := map[string][]string{}
	for resource := range storage {
		served[resource] = []string{gv.Version}
	}
	group := &endpoints.APIGroupVersion{
		Root:                        "/api",
		GroupVersion:                gv,
		AllServedVersionsByResource: served,
		Storage:                     storage,
		MetaGroupVersion:            info.MetaGroupVersion,

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
		EquivalentResourceRegistry: runtime.NewEquivalentResourceRegistry(),
		MinRequestTimeout:          time.Minute,
	}
	container := restful.NewContainer()
	if _, _, err := group.InstallREST(container); err != nil {
		return nil, fmt.Errorf("installing the core API: %w", err)
	}
	rec := httptest.NewRecorder()
	container.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1", nil))
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("reading /api/v1 discovery: status %d: %s", rec.Code, rec.Body.String())
	}
	var list metav1.APIResourceList
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
		return nil, fmt.Errorf("reading /api/v1 discovery: %w", err)
	}
	return &list, nil
}
