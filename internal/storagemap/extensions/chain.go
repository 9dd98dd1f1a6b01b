package extensions

import (
	"context"
	"fmt"

	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	serveroptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/server/resourceconfig"
	storagevalue "k8s.io/apiserver/pkg/storage/value"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	apiregistrationv1beta1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1beta1"
	aggregatorapiserver "k8s.io/kube-aggregator/pkg/apiserver"
	aggregatorscheme "k8s.io/kube-aggregator/pkg/apiserver/scheme"
	apiservicerest "k8s.io/kube-aggregator/pkg/registry/apiservice/rest"
	apiserveroptions "k8s.io/kubernetes/cmd/kube-apiserver/app/options"

	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/storagemap/restoptions"
	"github.com/regctl/regctl/internal/storagemap/served"
	"github.com/regctl/regctl/internal/storagemap/wiring"
)

// The other two servers of kube-apiserver's chain store in the same etcd:
// the apiextensions server (CustomResourceDefinitions) and the aggregator
// (APIServices). Each gets a copy of the server's etcd options with its own
// codec and storage versions, and a SimpleStorageFactory (keys are
// group/resource, --etcd-servers-overrides do not apply), as
// controlplane/apiserver CreateAPIExtensionsConfig and
// CreateAggregatorConfig set them up through EtcdOptions.ApplyTo.

// Chain is what the other servers of the chain take from kube-apiserver's
// options.
type Chain struct {
	Server *apiserveroptions.ServerRunOptions
	// Etcd is kube-apiserver's completed etcd options; each server copies
	// them.
	Etcd         serveroptions.EtcdOptions
	Transformers storagevalue.ResourceTransformers
	Getter       *restoptions.Getter
	// NotEstablished gets, by the kind they would serve, the CRDs in etcd
	// that are not established, which the server does not serve.
	NotEstablished map[schema.GroupVersionKind]string
	// Models are the OpenAPI models field managers are built from;
	// FieldManagement asks for them for custom resources.
	Models          *served.Models
	FieldManagement bool
	// CRDNames, when set, are the only CRDs a command needs, if each is
	// established; else CRDGroups, when set, are the only groups whose
	// CRDs it needs. Client is the etcd client their keys are read with.
	CRDNames  []string
	CRDGroups []string
	// CRDRevision, when set, is the revision the CRDs are read at.
	CRDRevision int64
	// MadeUp are the CRDs made up, by name, for objects whose CRD is gone
	// (leftovers.go), read beside those in etcd.
	MadeUp map[string]*apiextensionsv1.CustomResourceDefinition
	// Admission and Authorizer are what the servers' request handlers
	// admit and authorize with (see served.Installer).
	Admission  admission.Interface
	Authorizer authorizer.Authorizer
	Client     func(context.Context) (*clientv3.Client, error)
}

// restOptionsGetter is EtcdOptions.ApplyTo's getter on etcd (one storage
// config for every resource, kube-apiserver's encryption transformers),
// recorded as kube-apiserver's own.
func (c Chain) restOptionsGetter(etcd serveroptions.EtcdOptions, typer runtime.ObjectTyper) *restoptions.Getter {
	return c.Getter.ForServer(etcd.CreateRESTOptionsGetter(&serveroptions.SimpleStorageFactory{StorageConfig: etcd.StorageConfig}, c.Transformers), typer)
}

// extensionsGroup is the apiextensions server's group: its
// RESTOptionsGetter as CreateAPIExtensionsConfig configures it, and the
// storage map apiextensions' completedConfig.New builds from it.
func (c Chain) extensionsGroup() (*genericapiserver.APIGroupInfo, error) {
	getter := c.extensionsGetter()

	enabled, err := resourceconfig.MergeAPIResourceConfigs(apiextensionsapiserver.DefaultAPIResourceConfigSource(), c.Server.APIEnablement.RuntimeConfig, apiextensionsapiserver.Scheme)
	if err != nil {
		return nil, fmt.Errorf("reading `--runtime-config` for %s: %w", apiextensions.GroupName, err)
	}
	// The storage part of completedConfig.New, which otherwise builds and
	// starts a whole generic apiserver around it.
	info := genericapiserver.NewDefaultAPIGroupInfo(apiextensions.GroupName, apiextensionsapiserver.Scheme, metav1.ParameterCodec, apiextensionsapiserver.Codecs)
	storage := map[string]rest.Storage{}
	if resource := "customresourcedefinitions"; enabled.ResourceEnabled(apiextensionsv1.SchemeGroupVersion.WithResource(resource)) {
		crds, err := customresourcedefinition.NewREST(apiextensionsapiserver.Scheme, getter)
		if err != nil {
			return nil, fmt.Errorf("creating the storage of %s: %w", resource, err)
		}
		storage[resource] = crds
		storage[resource+"/status"] = customresourcedefinition.NewStatusREST(apiextensionsapiserver.Scheme, crds)
	}
	if len(storage) > 0 {
		info.VersionedResourcesStorageMap[apiextensionsv1.SchemeGroupVersion.Version] = storage
	}
	return &info, nil
}

// extensionsGetter is the apiextensions server's RESTOptionsGetter, as
// CreateAPIExtensionsConfig configures it.
func (c Chain) extensionsGetter() *restoptions.Getter {
	etcd := c.Etcd
	// "this is where the true decodable levels come from"; v1beta1 is
	// still what CRDs are written in (issue 82292).
	etcd.StorageConfig.Codec = apiextensionsapiserver.Codecs.LegacyCodec(apiextensionsv1beta1.SchemeGroupVersion, apiextensionsv1.SchemeGroupVersion)
	etcd.StorageConfig.EncodeVersioner = runtime.NewMultiGroupVersioner(apiextensionsv1beta1.SchemeGroupVersion, schema.GroupKind{Group: apiextensionsv1beta1.GroupName})
	return c.restOptionsGetter(etcd, apiextensionsapiserver.Scheme)
}

// aggregatorGroup is the aggregator's group: its RESTOptionsGetter as
// CreateAggregatorConfig configures it, and the aggregator's own REST
// storage.
func (c Chain) aggregatorGroup() (*genericapiserver.APIGroupInfo, error) {
	etcd := c.Etcd
	etcd.StorageConfig.Codec = aggregatorscheme.Codecs.LegacyCodec(apiregistrationv1.SchemeGroupVersion, apiregistrationv1beta1.SchemeGroupVersion)
	etcd.StorageConfig.EncodeVersioner = runtime.NewMultiGroupVersioner(apiregistrationv1.SchemeGroupVersion, schema.GroupKind{Group: apiregistrationv1beta1.GroupName})
	getter := c.restOptionsGetter(etcd, aggregatorscheme.Scheme)

	enabled, err := resourceconfig.MergeAPIResourceConfigs(aggregatorapiserver.DefaultAPIResourceConfigSource(), c.Server.APIEnablement.RuntimeConfig, aggregatorscheme.Scheme)
	if err != nil {
		return nil, fmt.Errorf("reading `--runtime-config` for %s: %w", apiregistrationv1.GroupName, err)
	}
	// As the aggregator's completedConfig.NewWithDelegate calls it.
	info := apiservicerest.NewRESTStorage(enabled, getter, false)
	return &info, nil
}

// AggregatorProvider is what makes the aggregator's storage and installs
// its proxy for each APIService backed by a service.
var AggregatorProvider = wiring.Provider{Value: aggregatorapiserver.CompletedConfig{}, Method: "NewWithDelegate"}

// versions are the apiextensions and aggregator groups' versions, after
// kube-apiserver's own, as the delegation chain puts their servers; they
// are installed with the same installer as kube-apiserver's, so their
// discovery is the servers'.
func (c Chain) versions() ([]served.Version, error) {
	var out []served.Version
	for _, group := range []struct {
		build    func() (*genericapiserver.APIGroupInfo, error)
		provider wiring.Provider
	}{
		{c.extensionsGroup, wiring.Provider{Value: apiextensionsapiserver.CompletedConfig{}, Method: "New"}},
		{c.aggregatorGroup, AggregatorProvider},
	} {
		info, err := group.build()
		if err != nil {
			return nil, err
		}
		versions, err := served.VersionsOf(info, group.provider)
		if err != nil {
			return nil, err
		}
		out = append(out, versions...)
	}
	return out, nil
}

// Extend adds the rest of kube-apiserver's chain to the versions of its own
// groups: the apiextensions and aggregator groups, then the custom
// resources of the CRDs in etcd; and the routes the aggregator proxies, from
// the APIServices in etcd. With readEtcd false it reads neither.
func (c Chain) Extend(ctx context.Context, versions []served.Version, readEtcd bool) ([]served.Version, []routetable.Route, *Serving, error) {
	more, err := c.versions()
	if err != nil || !readEtcd {
		return append(versions, more...), nil, nil, err
	}
	crs, serving, err := c.customResources(ctx, more)
	if err != nil {
		return nil, nil, nil, err
	}
	proxied, err := proxiedRoutes(ctx, more)
	if err != nil {
		return nil, nil, nil, err
	}
	return append(append(versions, more...), crs...), proxied, serving, nil
}

// listStore lists every object of resource through its store among
// versions, in the group's internal version; nil when --runtime-config left
// the resource out, and so the server serves none.
func listStore(ctx context.Context, versions []served.Version, group, resource string) (runtime.Object, error) {
	for _, v := range versions {
		if l, ok := v.Stores[resource].(rest.Lister); ok && v.GV.Group == group {
			list, err := l.List(genericapirequest.WithNamespace(ctx, ""), &metainternalversion.ListOptions{})
			if err != nil {
				return nil, fmt.Errorf("reading the %s: %w", resource, err)
			}
			return list, nil
		}
	}
	return nil, nil
}
