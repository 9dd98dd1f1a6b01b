package wiring

import (
	"path"
	"reflect"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	corerest "k8s.io/kubernetes/pkg/registry/core/rest"

	"github.com/regctl/regctl/internal/buildinfo"
	"github.com/regctl/regctl/internal/routetable"
)

// KubernetesVersion is the version of k8s.io/kubernetes regctl was built
// against, from the binary's build information or, in test binaries, from
// the module directory the server's code was compiled from.
func KubernetesVersion() string {
	return buildinfo.ModuleVersion("k8s.io/kubernetes", corerest.New)
}

// routes joins the storage map, the server's discovery and the recorded
// storage decisions into one record per path, sorted by path.
func routes(stores map[string]rest.Storage, owners map[string]owner, discovered *metav1.APIResourceList, getter *recordingGetter) []routetable.Route {
	byPath := map[string]metav1.APIResource{}
	for _, r := range discovered.APIResources {
		byPath[r.Name] = r
	}
	gv := discovered.GroupVersion

	var out []routetable.Route
	for p, storage := range stores {
		d := byPath[p]
		resource, sub, _ := strings.Cut(p, "/")
		r := routetable.Route{
			Path:               p,
			Resource:           resource,
			Subresource:        sub,
			Group:              d.Group,
			Version:            d.Version,
			Kind:               d.Kind,
			Scope:              scope(d.Namespaced),
			Verbs:              d.Verbs,
			ShortNames:         d.ShortNames,
			Categories:         d.Categories,
			Storage:            typeName(storage),
			StorageVersionHash: d.StorageVersionHash,
			Decorator:          routetable.DecoratorNone,
		}
		// Discovery leaves group and version empty when they are the list's.
		if r.Group == "" && r.Version == "" {
			r.Version = gv
		}
		o := owners[p]
		r.Store, r.SharesWith = o.kind, o.sharesWith
		if o.store != nil {
			qr := o.store.DefaultQualifiedResource
			if dec, ok := getter.decision(qr); ok {
				root := o.store.KeyRootFunc(genericapirequest.NewContext())
				r.KeyPrefix = path.Join("/", dec.EtcdPrefix, root) + "/"
				r.Decorator = dec.Decorator
				r.StorageVersion = dec.StorageVersion
				r.MediaType = dec.MediaType
				r.EtcdServers = dec.EtcdServers
				r.Encryption = dec.Encryption
			}
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func scope(namespaced bool) string {
	if namespaced {
		return "Namespaced"
	}
	return "Cluster"
}

// typeName is the Go type of a storage, with its package path.
func typeName(v any) string {
	t := reflect.TypeOf(v)
	prefix := ""
	for t.Kind() == reflect.Pointer {
		prefix += "*"
		t = t.Elem()
	}
	return prefix + t.PkgPath() + "." + t.Name()
}
