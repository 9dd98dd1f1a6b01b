package extensions

import (
	"context"
	"fmt"
	gopath "path"
	"slices"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsoptions "k8s.io/apiextensions-apiserver/pkg/cmd/server/options"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/storage/value"
	"k8s.io/utils/ptr"

	"github.com/regctl/regctl/internal/etcdview"
)

// A CRD deleted by deleting its key alone (etcdctl del, a restore that left
// it out) leaves its objects in etcd, where no server serves them: nothing
// deletes them, nothing reads them. get and inspect of RESOURCE.GROUP read
// them all the same, through a CRD made up from what they are: their
// stored kind and versions, a schema that keeps every field, and a warning
// on every read that the CRD is gone, how many objects remain and where.
// Saved (get -o yaml), they can be created again once the CRD is.

// leftoverSample is how many stored values the made-up CRD is drawn from:
// their kind, versions and scope.
const leftoverSample = 500

// Leftovers makes up a CRD for each name of only (comma-separated, as get
// takes them) that names a group, serves nothing (serves says), and has
// objects stored where a CRD of that name would store them. It reads etcd
// only for such names, which fail to resolve otherwise.
func (c Chain) Leftovers(ctx context.Context, only string, serves func(name string) bool) (map[string]*apiextensionsv1.CustomResourceDefinition, error) {
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, name := range strings.Split(only, ",") {
		if serves(name) {
			continue
		}
		for _, gr := range leftoverCandidates(name) {
			crd, err := c.leftoverCRD(ctx, gr)
			if err != nil {
				return nil, err
			}
			if crd != nil {
				out[crd.Name] = crd
				break
			}
		}
	}
	return out, nil
}

// leftoverCandidates are the group resources name may mean: RESOURCE.GROUP,
// or RESOURCE.VERSION.GROUP.
func leftoverCandidates(name string) []schema.GroupResource {
	full, gr := schema.ParseResourceArg(strings.ToLower(name))
	var out []schema.GroupResource
	if full != nil && strings.Contains(full.Group, ".") {
		out = append(out, full.GroupResource())
	}
	if strings.Contains(gr.Group, ".") {
		out = append(out, gr)
	}
	return out
}

// leftoverCRD makes up the CRD of gr's objects, if etcd holds any where
// the server's custom resource storage keeps gr's: nil when it holds none.
func (c Chain) leftoverCRD(ctx context.Context, gr schema.GroupResource) (*apiextensionsv1.CustomResourceDefinition, error) {
	opts, err := apiextensionsoptions.NewCRDRESTOptionsGetter(c.Etcd, c.Transformers, nil).GetRESTOptions(gr, nil)
	if err != nil {
		return nil, err
	}
	prefix := strings.TrimSuffix(gopath.Join("/", opts.StorageConfig.Prefix, opts.ResourcePrefix), "/") + "/"
	client, err := c.Client(ctx)
	if err != nil {
		return nil, err
	}
	count, _, err := etcdview.CountAt(ctx, client, prefix, 0)
	if err != nil || count == 0 {
		return nil, err
	}
	resp, err := client.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithLimit(leftoverSample))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", prefix, err)
	}
	var kind string
	var versions []string
	namespaced := false
	for _, kv := range resp.Kvs {
		data := kv.Value
		if tr := opts.StorageConfig.Transformer; tr != nil {
			if data, _, err = tr.TransformFromStorage(ctx, data, value.DefaultContext(kv.Key)); err != nil {
				continue
			}
		}
		obj, gvk, err := opts.StorageConfig.Codec.Decode(data, nil, &unstructured.Unstructured{})
		if err != nil || obj == nil || gvk.Group != gr.Group || gvk.Kind == "" {
			continue
		}
		if kind == "" {
			kind = gvk.Kind
			namespaced = strings.Contains(strings.TrimPrefix(string(kv.Key), prefix), "/")
		}
		if gvk.Kind == kind && !slices.Contains(versions, gvk.Version) {
			versions = append(versions, gvk.Version)
		}
	}
	remain := fmt.Sprintf("%d keys remain", count)
	if count == 1 {
		remain = "1 key remains"
	}
	if kind == "" {
		return nil, fmt.Errorf("%s under %s, where customresourcedefinition %s.%s stored its objects, but none of the first %d is one of its objects", remain, prefix, gr.Resource, gr.Group, leftoverSample)
	}
	return madeUpCRD(gr, kind, versions, namespaced, fmt.Sprintf("customresourcedefinition %s.%s is gone: %s under %s, read here through a CRD made up from them (kind %s, every field kept as stored); recreate the CRD to serve them again", gr.Resource, gr.Group, remain, prefix, kind)), nil
}

// madeUpCRD is an established CRD of gr that serves kind at versions, the
// first its storage version, with a schema that keeps every field, each
// version warning.
func madeUpCRD(gr schema.GroupResource, kind string, versions []string, namespaced bool, warning string) *apiextensionsv1.CustomResourceDefinition {
	names := apiextensionsv1.CustomResourceDefinitionNames{Plural: gr.Resource, Singular: strings.ToLower(kind), Kind: kind, ListKind: kind + "List"}
	scope := apiextensionsv1.ClusterScoped
	if namespaced {
		scope = apiextensionsv1.NamespaceScoped
	}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: gr.Resource + "." + gr.Group, UID: types.UID("made-up-" + gr.Resource + "." + gr.Group), Generation: 1},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: gr.Group, Names: names, Scope: scope,
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter},
		},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{
			AcceptedNames:  names,
			StoredVersions: versions,
			Conditions: []apiextensionsv1.CustomResourceDefinitionCondition{
				{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue},
				{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue},
			},
		},
	}
	for i, v := range versions {
		crd.Spec.Versions = append(crd.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{
			Name: v, Served: true, Storage: i == 0,
			Deprecated: true, DeprecationWarning: ptr.To(warning),
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object", XPreserveUnknownFields: ptr.To(true),
			}},
		})
	}
	return crd
}
