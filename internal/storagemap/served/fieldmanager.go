package served

import (
	"fmt"
	"sync"

	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/endpoints"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	openapiutil "k8s.io/apiserver/pkg/util/openapi"
	aggregatorscheme "k8s.io/kube-aggregator/pkg/apiserver/scheme"
	openapibuilder3 "k8s.io/kube-openapi/pkg/builder3"
	openapicommon "k8s.io/kube-openapi/pkg/common"
	kubeopenapiutil "k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// Models are the OpenAPI models the servers of kube-apiserver's
// chain build their field managers' type converters from, built when a
// write first needs them: they cost more than a read should pay.
type Models struct {
	mu     sync.Mutex
	config *openapicommon.OpenAPIV3Config
	byInfo map[*genericapiserver.APIGroupInfo]map[string]*spec.Schema
}

// openAPIConfig is kube-apiserver's OpenAPI v3 config, as
// controlplane/apiserver.BuildGenericConfig sets it up from the generated
// definitions cmd/kube-apiserver passes it, with the namer of the three
// servers' schemes; the apiextensions and aggregator servers take a copy of
// it.
func openAPIConfig() *openapicommon.OpenAPIV3Config {
	definitions := openapiutil.GetOpenAPIDefinitionsWithoutDisabledFeatures(generatedopenapi.GetOpenAPIDefinitions)
	namer := openapinamer.NewDefinitionNamer(legacyscheme.Scheme, apiextensionsapiserver.Scheme, aggregatorscheme.Scheme)
	return genericapiserver.DefaultOpenAPIV3Config(definitions, namer)
}

// forGroup is the models GenericAPIServer.getOpenAPIModels builds when it
// installs the group of info: the definitions of the kind of every path
// the group serves (its getResourceNamesForGroup, which is not exported;
// kube-apiserver ignores no path) and of what they refer to. The server
// builds them once per InstallAPIGroups call, which may hold several
// groups; a kind's models are the same either way.
func (m *Models) ForGroup(info *genericapiserver.APIGroupInfo) (map[string]*spec.Schema, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if models, ok := m.byInfo[info]; ok {
		return models, nil
	}
	if m.config == nil {
		m.config = openAPIConfig()
		m.byInfo = map[*genericapiserver.APIGroupInfo]map[string]*spec.Schema{}
	}
	var names []string
	for _, gv := range info.PrioritizedVersions {
		for path, storage := range info.VersionedResourcesStorageMap[gv.Version] {
			kind, err := endpoints.GetResourceKind(gv, storage, info.Scheme)
			if err != nil {
				return nil, fmt.Errorf("reading the kind of %s in %s: %w", path, gv, err)
			}
			sample, err := info.Scheme.New(kind)
			if err != nil {
				return nil, fmt.Errorf("building the OpenAPI models of %s in %s: %w", path, gv, err)
			}
			names = append(names, kubeopenapiutil.GetCanonicalTypeName(sample))
		}
	}
	models, err := openapibuilder3.BuildOpenAPIDefinitionsForResources(m.config, names...)
	if err != nil {
		return nil, fmt.Errorf("building the OpenAPI models of API group %q: %w", info.PrioritizedVersions[0].Group, err)
	}
	m.byInfo[info] = models
	return models, nil
}

// typeConverter is the type converter the installer's field managers of
// info's group use, as getOpenAPIModels builds it.
func (m *Models) typeConverter(info *genericapiserver.APIGroupInfo) (managedfields.TypeConverter, error) {
	models, err := m.ForGroup(info)
	if err != nil {
		return nil, err
	}
	tc, err := managedfields.NewTypeConverter(models, false)
	if err != nil {
		return nil, fmt.Errorf("building the type converter of API group %q: %w", info.PrioritizedVersions[0].Group, err)
	}
	return tc, nil
}

// GroupFieldManager is the field manager the installer's
// registerResourceHandlers builds for the path of a built-in group's
// version with storage: the group's type converter, its scheme as
// convertor, defaulter and creater, the path's kind and hub version, and
// the fields its strategy resets.
func GroupFieldManager(models *Models, info *genericapiserver.APIGroupInfo, kind schema.GroupVersionKind, subresource string, storage rest.Storage) (*managedfields.FieldManager, error) {
	tc, err := models.typeConverter(info)
	if err != nil {
		return nil, err
	}
	var resetFields map[fieldpath.APIVersion]fieldpath.Filter
	resetFieldsStrategy, isResetFieldsStrategy := storage.(rest.ResetFieldsStrategy)
	if isResetFieldsStrategy {
		resetFields = fieldpath.NewExcludeFilterSetMap(resetFieldsStrategy.GetResetFields())
	}
	if s, ok := storage.(rest.ResetFieldsFilterStrategy); ok {
		if isResetFieldsStrategy {
			return nil, fmt.Errorf("%s may not implement both ResetFieldsStrategy and ResetFieldsFilterStrategy", kind)
		}
		resetFields = s.GetResetFieldsFilter()
	}
	fm, err := managedfields.NewDefaultFieldManager(tc, runtime.UnsafeObjectConvertor(info.Scheme), info.Scheme, info.Scheme,
		kind, schema.GroupVersion{Group: kind.Group, Version: runtime.APIVersionInternal}, subresource, resetFields)
	if err != nil {
		return nil, fmt.Errorf("creating the field manager of %s: %w", kind, err)
	}
	return fm, nil
}

// lazyTypeConverter is a group's type converter built on its first use.
// The installer builds a field manager for every path it installs, and
// only a request that writes through the installed handlers (kubectl's
// diff, reaching them through the loopback client) uses one: the models
// it is built from cost more than discovery should pay. A failure to build
// it is each use's error, which the field manager reports as the server's
// does.
type lazyTypeConverter struct {
	build func() (managedfields.TypeConverter, error)
	once  sync.Once
	tc    managedfields.TypeConverter
	err   error
}

func (l *lazyTypeConverter) get() (managedfields.TypeConverter, error) {
	l.once.Do(func() { l.tc, l.err = l.build() })
	return l.tc, l.err
}

func (l *lazyTypeConverter) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	tc, err := l.get()
	if err != nil {
		return nil, err
	}
	return tc.ObjectToTyped(obj, opts...)
}

func (l *lazyTypeConverter) TypedToObject(v *typed.TypedValue) (runtime.Object, error) {
	tc, err := l.get()
	if err != nil {
		return nil, err
	}
	return tc.TypedToObject(v)
}
