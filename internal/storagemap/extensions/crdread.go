package extensions

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/gctune"
	"github.com/regctl/regctl/internal/storagemap/schemaless"
	"github.com/regctl/regctl/internal/storagemap/served"
)

// crdPage is how many CRDs one read of the map's CRDs takes: a CRD is tens
// to hundreds of KiB, and a cluster may hold thousands.
const crdPage = 10

// readCRDs lists the CRDs, in v1, the established ones only: those the
// server serves. The others are told to pending. The CRDs come through the
// server's CRD store, page by page, but decoded without their schemas
// (schemaless.Strip): nearly all of a CRD's bytes, which only serving its
// custom resources reads (readCRD). Nil when --runtime-config leaves the
// CRDs out. With c.CRDNames set it reads those CRDs only, and fails with
// ErrUndecided unless each is established; else with c.CRDGroups set it
// reads the CRDs of those groups only, found by their keys: a CRD's name is
// its plural and group.
func (c Chain) readCRDs(ctx context.Context, crdVersions []served.Version, pending func(*apiextensionsv1.CustomResourceDefinition)) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	out, err := c.readStoredCRDs(ctx, crdVersions, pending)
	if err != nil || crdStore(crdVersions) == nil {
		return out, err
	}
	// The CRDs made up for objects whose CRD is gone (leftovers), unless
	// one of that name is back.
	for _, name := range slices.Sorted(maps.Keys(c.MadeUp)) {
		if !slices.ContainsFunc(out, func(crd *apiextensionsv1.CustomResourceDefinition) bool { return crd.Name == name }) {
			out = append(out, c.MadeUp[name])
		}
	}
	return out, nil
}

// readStoredCRDs is readCRDs of the CRDs in etcd alone.
func (c Chain) readStoredCRDs(ctx context.Context, crdVersions []served.Version, pending func(*apiextensionsv1.CustomResourceDefinition)) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	if crdStore(crdVersions) == nil {
		return nil, nil
	}
	store, err := c.SchemalessCRDs()
	if err != nil {
		return nil, err
	}
	defer store.Destroy()
	// What a page leaves behind is garbage, megabytes of it: the start-up
	// pacing would let several pages of it pile up.
	gctune.Steady()
	var out []*apiextensionsv1.CustomResourceDefinition
	keep := func(internal *apiextensions.CustomResourceDefinition) error {
		crd, err := toV1(internal)
		if err != nil {
			return err
		}
		if apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
			out = append(out, crd)
		} else {
			pending(crd)
		}
		return nil
	}
	ctx = genericapirequest.WithNamespace(ctx, "")
	get := func(name string) (*apiextensions.CustomResourceDefinition, error) {
		obj, err := store.Get(ctx, name, &metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading customresourcedefinition %s: %w", name, err)
		}
		return obj.(*apiextensions.CustomResourceDefinition), nil
	}
	if c.CRDNames != nil {
		for _, name := range c.CRDNames {
			crd, err := get(name)
			if err != nil {
				return nil, err
			}
			if crd == nil || !apiextensions.IsCRDConditionTrue(crd, apiextensions.Established) {
				return nil, ErrUndecided
			}
			if err := keep(crd); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	if c.CRDGroups != nil {
		names, err := c.crdsOf(ctx, store, c.CRDGroups)
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			crd, err := get(name)
			if err != nil {
				return nil, err
			}
			if crd == nil {
				continue // deleted since its key was read
			}
			if err := keep(crd); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	opts := &metainternalversion.ListOptions{Limit: crdPage}
	if c.CRDRevision > 0 {
		opts.ResourceVersion, opts.ResourceVersionMatch = strconv.FormatInt(c.CRDRevision, 10), metav1.ResourceVersionMatchExact
	}
	for {
		list, err := store.List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("reading the customresourcedefinitions: %w", err)
		}
		internal, ok := list.(*apiextensions.CustomResourceDefinitionList)
		if !ok {
			return nil, fmt.Errorf("reading the customresourcedefinitions: got a %T", list)
		}
		for i := range internal.Items {
			if err := keep(&internal.Items[i]); err != nil {
				return nil, err
			}
		}
		if internal.Continue == "" {
			return out, nil
		}
		// The token holds the revision the first page was read at, which
		// the server takes from it alone.
		opts.Continue, opts.ResourceVersion, opts.ResourceVersionMatch = internal.Continue, "", ""
	}
}

// ErrUndecided says that the CRDs a command names (chain.crdNames) do not
// all exist established, so other CRDs of their groups may claim the names.
var ErrUndecided = errors.New("the named customresourcedefinitions are not all established")

// schemalessCRDs is a CRD store of the apiextensions server's that decodes
// CRDs without their schemas (schemaless.Codec). Its caller destroys it.
func (c Chain) SchemalessCRDs() (*customresourcedefinition.REST, error) {
	store, err := customresourcedefinition.NewREST(apiextensionsapiserver.Scheme, schemalessGetter{c.extensionsGetter()})
	if err != nil {
		return nil, fmt.Errorf("creating the storage of customresourcedefinitions: %w", err)
	}
	return store, nil
}

// crdsOf names the CRDs of groups, from the keys of the CRD store: a CRD's
// name, the last part of its key, is its plural and group.
func (c Chain) crdsOf(ctx context.Context, store *customresourcedefinition.REST, groups []string) ([]string, error) {
	client, err := c.Client(ctx)
	if err != nil {
		return nil, err
	}
	prefix := path.Join("/", c.Etcd.StorageConfig.Prefix, store.KeyRootFunc(ctx)) + "/"
	var out []string
	err = etcdview.Pages(ctx, client, prefix, prefix, crdKeysPage, true, func(kvs []*mvccpb.KeyValue) error {
		for _, kv := range kvs {
			name := strings.TrimPrefix(string(kv.Key), prefix)
			if _, group, ok := strings.Cut(name, "."); ok && slices.Contains(groups, group) {
				out = append(out, name)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the keys of the customresourcedefinitions: %w", err)
	}
	return out, nil
}

// crdKeysPage is how many CRD keys one read takes.
const crdKeysPage = 1000

// readCRD reads the CRD name whole, through the CRD store of crdVersions,
// for serving its custom resources.
func readCRD(ctx context.Context, crdVersions []served.Version, name string, rev int64) (*apiextensionsv1.CustomResourceDefinition, error) {
	store := crdStore(crdVersions)
	if store == nil {
		return nil, fmt.Errorf("reading customresourcedefinition %s: `--runtime-config` leaves customresourcedefinitions out", name)
	}
	ctx = genericapirequest.WithNamespace(ctx, "")
	var obj runtime.Object
	var err error
	if rev == 0 {
		obj, err = store.Get(ctx, name, &metav1.GetOptions{})
	} else if lister, ok := store.(rest.Lister); ok {
		obj, err = crdAt(ctx, lister, name, rev)
	} else {
		err = errors.New("its store lists nothing")
	}
	if err != nil {
		return nil, fmt.Errorf("reading customresourcedefinition %s: %w", name, err)
	}
	internal, ok := obj.(*apiextensions.CustomResourceDefinition)
	if !ok {
		return nil, fmt.Errorf("reading customresourcedefinition %s: got a %T", name, obj)
	}
	return toV1(internal)
}

// crdAt reads the CRD name as etcd held it at rev: a Get reads it now, a
// List of that one name reads it at a revision.
func crdAt(ctx context.Context, store rest.Lister, name string, rev int64) (runtime.Object, error) {
	list, err := store.List(ctx, &metainternalversion.ListOptions{
		FieldSelector:        fields.OneTermEqualSelector("metadata.name", name),
		ResourceVersion:      strconv.FormatInt(rev, 10),
		ResourceVersionMatch: metav1.ResourceVersionMatchExact,
	})
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, apierrors.NewNotFound(apiextensions.Resource("customresourcedefinitions"), name)
	}
	return items[0], nil
}

// crdStore is the CRD store of crdVersions, nil when --runtime-config
// leaves it out.
func crdStore(crdVersions []served.Version) rest.Getter {
	for _, v := range crdVersions {
		if s, ok := v.Stores["customresourcedefinitions"].(rest.Getter); ok && v.GV.Group == apiextensions.GroupName {
			return s
		}
	}
	return nil
}

func toV1(internal *apiextensions.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := apiextensionsapiserver.Scheme.Convert(internal, crd, nil); err != nil {
		return nil, fmt.Errorf("reading customresourcedefinition %s: %w", internal.Name, err)
	}
	return crd, nil
}

// schemalessGetter is the CRD store's RESTOptionsGetter with a storage
// codec that leaves schemas out (schemaless.Codec). The getter it wraps records
// the server's own codec, so routes, handles and scan see that one.
type schemalessGetter struct{ generic.RESTOptionsGetter }

func (g schemalessGetter) GetRESTOptions(resource schema.GroupResource, example runtime.Object) (generic.RESTOptions, error) {
	opts, err := g.RESTOptionsGetter.GetRESTOptions(resource, example)
	opts.StorageConfig.Codec = schemaless.Codec{Codec: opts.StorageConfig.Codec}
	return opts, err
}
