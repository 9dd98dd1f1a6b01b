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
)

// FormatVersion is the version of the route table document. It changes when
// a field changes meaning, so that an older regctl refuses a newer table
// instead of misreading it.
const FormatVersion = 1

// Store kinds: how a path reaches etcd.
const (
	StoreOwn    = "own"    // the path is a store
	StoreShared = "shared" // it goes through another path's store
	StoreNone   = "none"   // it never touches etcd
)

// RouteTable is the document `regctl routes -o yaml|json` prints.
type RouteTable struct {
	FormatVersion     int     `json:"formatVersion"`
	KubernetesVersion string  `json:"kubernetesVersion"`
	EtcdPrefix        string  `json:"etcdPrefix"`
	Routes            []Route `json:"routes"`
}

// Route is one path of the core storage map and how it is stored.
type Route struct {
	Path               string   `json:"path"`
	Resource           string   `json:"resource"`
	Subresource        string   `json:"subresource,omitempty"`
	Group              string   `json:"group"`
	Version            string   `json:"version"`
	Kind               string   `json:"kind"`
	Scope              string   `json:"scope"`
	Verbs              []string `json:"verbs"`
	ShortNames         []string `json:"shortNames,omitempty"`
	Categories         []string `json:"categories,omitempty"`
	Storage            string   `json:"storage"`
	Store              string   `json:"store"`
	SharesWith         string   `json:"sharesWith,omitempty"`
	KeyPrefix          string   `json:"keyPrefix,omitempty"`
	Decorator          string   `json:"decorator"`
	StorageVersion     string   `json:"storageVersion,omitempty"`
	StorageVersionHash string   `json:"storageVersionHash,omitempty"`
	MediaType          string   `json:"mediaType,omitempty"`
	EtcdServers        []string `json:"etcdServers,omitempty"`
	Encryption         string   `json:"encryption,omitempty"`
}

// KubernetesVersion is the version of k8s.io/kubernetes regctl was built
// against, from the binary's build information or, in test binaries, from
// the module directory the server's code was compiled from.
func KubernetesVersion() string {
	return buildinfo.ModuleVersion("k8s.io/kubernetes", corerest.New)
}

// routes joins the storage map, the server's discovery and the recorded
// storage decisions into one record per path, sorted by path.
func routes(stores map[string]rest.Storage, owners map[string]owner, discovered *metav1.APIResourceList, getter *recordingGetter) []Route {
	byPath := map[string]metav1.APIResource{}
	for _, r := range discovered.APIResources {
		byPath[r.Name] = r
	}
	gv := discovered.GroupVersion

	var out []Route
	for p, storage := range stores {
		d := byPath[p]
		resource, sub, _ := strings.Cut(p, "/")
		r := Route{
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
			Decorator:          DecoratorNone,
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

// Header is the route table's column header; wide adds kind, verbs, storage
// version and the storage's Go type.
func (t RouteTable) Header(wide bool) []string {
	h := []string{"PATH", "SCOPE", "KEY PREFIX", "DECORATOR"}
	if wide {
		h = append(h, "KIND", "VERBS", "STORAGE VERSION", "STORAGE")
	}
	return h
}

// Rows projects each route onto the header's columns.
func (t RouteTable) Rows(wide bool) [][]string {
	rows := make([][]string, 0, len(t.Routes))
	for _, r := range t.Routes {
		row := []string{r.Path, r.Scope, orNone(r.KeyPrefix), r.Decorator}
		if wide {
			row = append(row, r.Kind, orNone(strings.Join(r.Verbs, ",")), orNone(r.StorageVersion), r.Storage)
		}
		rows = append(rows, row)
	}
	return rows
}

// orNone shows an empty cell as kubectl does.
func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
