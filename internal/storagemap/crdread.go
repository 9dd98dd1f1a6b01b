package storagemap

import (
	"bytes"
	"context"
	"encoding/json"
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
	"github.com/regctl/regctl/internal/storagemap/served"
)

// crdPage is how many CRDs one read of the map's CRDs takes: a CRD is tens
// to hundreds of KiB, and a cluster may hold thousands.
const crdPage = 10

// readCRDs lists the CRDs, in v1, the established ones only: those the
// server serves. The others are told to pending. The CRDs come through the
// server's CRD store, page by page, but decoded without their schemas
// (withoutSchemas): nearly all of a CRD's bytes, which only serving its
// custom resources reads (readCRD). Nil when --runtime-config leaves the
// CRDs out. With c.crdNames set it reads those CRDs only, and fails with
// errUndecided unless each is established; else with c.crdGroups set it
// reads the CRDs of those groups only, found by their keys: a CRD's name is
// its plural and group.
func (c chain) readCRDs(ctx context.Context, crdVersions []served.Version, pending func(*apiextensionsv1.CustomResourceDefinition)) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	out, err := c.readStoredCRDs(ctx, crdVersions, pending)
	if err != nil || crdStore(crdVersions) == nil {
		return out, err
	}
	// The CRDs made up for objects whose CRD is gone (leftovers), unless
	// one of that name is back.
	for _, name := range slices.Sorted(maps.Keys(c.madeUp)) {
		if !slices.ContainsFunc(out, func(crd *apiextensionsv1.CustomResourceDefinition) bool { return crd.Name == name }) {
			out = append(out, c.madeUp[name])
		}
	}
	return out, nil
}

// readStoredCRDs is readCRDs of the CRDs in etcd alone.
func (c chain) readStoredCRDs(ctx context.Context, crdVersions []served.Version, pending func(*apiextensionsv1.CustomResourceDefinition)) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	if crdStore(crdVersions) == nil {
		return nil, nil
	}
	store, err := c.schemalessCRDs()
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
	if c.crdNames != nil {
		for _, name := range c.crdNames {
			crd, err := get(name)
			if err != nil {
				return nil, err
			}
			if crd == nil || !apiextensions.IsCRDConditionTrue(crd, apiextensions.Established) {
				return nil, errUndecided
			}
			if err := keep(crd); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	if c.crdGroups != nil {
		names, err := c.crdsOf(ctx, store, c.crdGroups)
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
	if c.crdRevision > 0 {
		opts.ResourceVersion, opts.ResourceVersionMatch = strconv.FormatInt(c.crdRevision, 10), metav1.ResourceVersionMatchExact
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

// errUndecided says that the CRDs a command names (chain.crdNames) do not
// all exist established, so other CRDs of their groups may claim the names.
var errUndecided = errors.New("the named customresourcedefinitions are not all established")

// schemalessCRDs is a CRD store of the apiextensions server's that decodes
// CRDs without their schemas (schemaless). Its caller destroys it.
func (c chain) schemalessCRDs() (*customresourcedefinition.REST, error) {
	store, err := customresourcedefinition.NewREST(apiextensionsapiserver.Scheme, schemalessGetter{c.extensionsGetter()})
	if err != nil {
		return nil, fmt.Errorf("creating the storage of customresourcedefinitions: %w", err)
	}
	return store, nil
}

// crdsOf names the CRDs of groups, from the keys of the CRD store: a CRD's
// name, the last part of its key, is its plural and group.
func (c chain) crdsOf(ctx context.Context, store *customresourcedefinition.REST, groups []string) ([]string, error) {
	client, err := c.client(ctx)
	if err != nil {
		return nil, err
	}
	prefix := path.Join("/", c.etcd.StorageConfig.Prefix, store.KeyRootFunc(ctx)) + "/"
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
// codec that leaves schemas out (schemaless). The getter it wraps records
// the server's own codec, so routes, handles and scan see that one.
type schemalessGetter struct{ generic.RESTOptionsGetter }

func (g schemalessGetter) GetRESTOptions(resource schema.GroupResource, example runtime.Object) (generic.RESTOptions, error) {
	opts, err := g.RESTOptionsGetter.GetRESTOptions(resource, example)
	opts.StorageConfig.Codec = schemaless{opts.StorageConfig.Codec}
	return opts, err
}

// schemaless is a CRD store's codec that decodes a CRD with its schemas
// left out (withoutSchemas), and then as the codec does.
type schemaless struct{ runtime.Codec }

func (s schemaless) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if stripped, ok := withoutSchemas(data); ok {
		data = stripped
	}
	return s.Codec.Decode(data, defaults, into)
}

// withoutSchemas is the JSON of a CRD, as the apiextensions server stores
// it (v1beta1, or v1), with null for the OpenAPI schemas of its versions
// (spec.validation, spec.versions[*].schema) and every other byte as it
// is, for the server's codec to decode. ok is false when data is not a
// JSON object whose schemas it finds, which the codec then decodes, or
// refuses, as it is. It walks the JSON once, looking into spec and its
// versions only, and builds nothing of what it passes.
func withoutSchemas(data []byte) (out []byte, ok bool) {
	var cuts [][2]int
	version := func(key []byte, at int) (int, error) {
		end, err := skipValue(data, at)
		if string(key) == "schema" {
			cuts = append(cuts, [2]int{at, end})
		}
		return end, err
	}
	spec := func(key []byte, at int) (int, error) {
		switch string(key) {
		case "versions":
			return eachElement(data, at, func(at int) (int, error) { return eachMember(data, at, version) })
		case "validation":
			end, err := skipValue(data, at)
			cuts = append(cuts, [2]int{at, end})
			return end, err
		}
		return skipValue(data, at)
	}
	_, err := eachMember(data, skipSpace(data, 0), func(key []byte, at int) (int, error) {
		if string(key) == "spec" {
			return eachMember(data, at, spec)
		}
		return skipValue(data, at)
	})
	if err != nil || len(cuts) == 0 {
		return nil, false
	}
	out = make([]byte, 0, 16<<10)
	last := 0
	for _, c := range cuts {
		out = append(append(out, data[last:c[0]]...), "null"...)
		last = c[1]
	}
	return append(out, data[last:]...), true
}

var errNotJSON = errors.New("not the JSON withoutSchemas reads")

// eachMember calls member with the key and value offset of each member of
// the object at data[at], which returns where the value ends; it returns
// where the object ends.
func eachMember(data []byte, at int, member func(key []byte, at int) (int, error)) (int, error) {
	if at >= len(data) || data[at] != '{' {
		return 0, errNotJSON
	}
	i := skipSpace(data, at+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, nil
	}
	for {
		end, err := skipString(data, i)
		if err != nil {
			return 0, err
		}
		key := data[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			// A key written with escapes is read as a decode reads it.
			var unquoted string
			if json.Unmarshal(data[i:end], &unquoted) != nil {
				return 0, errNotJSON
			}
			key = []byte(unquoted)
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return 0, errNotJSON
		}
		if i, err = member(key, skipSpace(data, i+1)); err != nil {
			return 0, err
		}
		if i = skipSpace(data, i); i >= len(data) {
			return 0, errNotJSON
		}
		switch data[i] {
		case '}':
			return i + 1, nil
		case ',':
			i = skipSpace(data, i+1)
		default:
			return 0, errNotJSON
		}
	}
}

// eachElement is eachMember for the elements of the array at data[at].
func eachElement(data []byte, at int, element func(at int) (int, error)) (int, error) {
	if at >= len(data) || data[at] != '[' {
		return 0, errNotJSON
	}
	i := skipSpace(data, at+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, nil
	}
	for {
		var err error
		if i, err = element(i); err != nil {
			return 0, err
		}
		if i = skipSpace(data, i); i >= len(data) {
			return 0, errNotJSON
		}
		switch data[i] {
		case ']':
			return i + 1, nil
		case ',':
			i = skipSpace(data, i+1)
		default:
			return 0, errNotJSON
		}
	}
}

// skipValue is where the JSON value at data[at] ends. It checks only what
// finding the end takes: the codec decodes, and checks, what is kept.
func skipValue(data []byte, at int) (int, error) {
	if at >= len(data) {
		return 0, errNotJSON
	}
	switch data[at] {
	case '"':
		return skipString(data, at)
	case '{', '[':
		depth := 0
		for i := at; i < len(data); i++ {
			switch data[i] {
			case '"':
				end, err := skipString(data, i)
				if err != nil {
					return 0, err
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1, nil
				}
			}
		}
		return 0, errNotJSON
	}
	// A number, true, false or null.
	i := at
	for i < len(data) && !strings.ContainsRune(",}] \t\r\n", rune(data[i])) {
		i++
	}
	if i == at {
		return 0, errNotJSON
	}
	return i, nil
}

// skipString is where the string at data[at] ends, past its closing quote.
func skipString(data []byte, at int) (int, error) {
	if at >= len(data) || data[at] != '"' {
		return 0, errNotJSON
	}
	// Schemas are mostly long descriptions: find each quote at memchr's
	// speed, and tell an escaped one by the backslashes before it.
	for i := at + 1; ; {
		j := bytes.IndexByte(data[i:], '"')
		if j < 0 {
			return 0, errNotJSON
		}
		quote := i + j
		backslashes := 0
		for k := quote - 1; k > at && data[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return quote + 1, nil
		}
		i = quote + 1
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}
