// Package routetable holds regctl's route records: the document `regctl
// routes -o yaml|json` writes, read back and compared field by field, so
// that a change in how kube-apiserver stores its API shows up in review and
// fails CI. It links no server code: tools that only compare tables stay
// small.
package routetable

import "strings"

// FormatVersion is the version of the route table document. It changes when
// a field changes meaning, so that an older regctl refuses a newer table
// instead of misreading it. Version 2: group and version are those the path
// is served under, and a subresource served in another group's kind
// (pods/eviction, policy/v1 Eviction) says so in kindGroupVersion.
//
// Version 3: a route says how its store is wired (Wiring): provider,
// constructor, strategies, the store's functions, selectable fields,
// triggers and indexers.
const FormatVersion = 3

// Store kinds: how a path reaches etcd.
const (
	StoreOwn    = "own"    // the path is a store
	StoreShared = "shared" // it goes through another path's store
	StoreNone   = "none"   // it never touches etcd
)

// RouteTable is the document `regctl routes -o yaml|json` prints.
type RouteTable struct {
	FormatVersion     int    `json:"formatVersion"`
	KubernetesVersion string `json:"kubernetesVersion"`
	// EmulatedVersion is the Kubernetes version the server emulates
	// (major.minor, its --emulated-version); FeatureGates the gates whose
	// value differs from their default, by name.
	EmulatedVersion string          `json:"emulatedVersion,omitempty"`
	FeatureGates    map[string]bool `json:"featureGates,omitempty"`
	EtcdPrefix      string          `json:"etcdPrefix"`
	Routes          []Route         `json:"routes"`
}

// Route is one path of the storage map and how it is stored.
type Route struct {
	Path               string   `json:"path"`
	Resource           string   `json:"resource"`
	Subresource        string   `json:"subresource,omitempty"`
	Group              string   `json:"group"`
	Version            string   `json:"version"`
	Kind               string   `json:"kind"`
	KindGroupVersion   string   `json:"kindGroupVersion,omitempty"`
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
	// ProxiedTo is the service (namespace/name:port) the aggregator proxies
	// the path to: an APIService backed by a service, whose objects are not
	// in this etcd.
	ProxiedTo string `json:"proxiedTo,omitempty"`
	Wiring
}

// Wiring is how a path's store is wired, as far as names go (`regctl
// routes describe` adds where the code is): what a change to a registry
// changes. Function and type names carry their package path.
type Wiring struct {
	// Provider is the group's storage provider (a RESTStorageProvider's
	// type), or the function of the server's chain that made the store.
	Provider string `json:"provider,omitempty"`
	// Constructor is the function that made the store (NewStorage,
	// NewREST).
	Constructor string `json:"constructor,omitempty"`
	// Strategies are the store's strategies' types by role: create,
	// update, delete, resetFields.
	Strategies map[string]string `json:"strategies,omitempty"`
	// StrategyMethods are the methods the strategies' own types declare
	// (podStrategy.PrepareForCreate), not those they embed.
	StrategyMethods []string `json:"strategyMethods,omitempty"`
	// Funcs are the store's function fields the registry set (NewFunc,
	// PredicateFunc, BeginCreate, TTLFunc, ...), by field: those it left
	// to CompleteWithOptions' defaults are not listed. A closure is named
	// by the function it is declared in.
	Funcs map[string]string `json:"funcs,omitempty"`
	// SelectableFields are the fields a field selector can use.
	SelectableFields []string `json:"selectableFields,omitempty"`
	// Triggers and Indexers are what a watch cache of the store indexes
	// by: its StoreOptions' TriggerFunc fields and Indexers names.
	Triggers []string `json:"triggers,omitempty"`
	Indexers []string `json:"indexers,omitempty"`
}

// Decorator names as printed in the route table.
const (
	DecoratorCacher      = "cacher"
	DecoratorUndecorated = "undecorated"
	DecoratorNone        = "none"
)

// APIVersion is the group version the path is served under, as kubectl
// prints an apiVersion: "v1", "apps/v1".
func (r Route) APIVersion() string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}

// Header is the route table's column header; wide adds the API version,
// kind, verbs, storage version and the storage's Go type.
func (t RouteTable) Header(wide bool) []string {
	h := []string{"PATH", "SCOPE", "KEY PREFIX", "DECORATOR"}
	if wide {
		h = append(h, "APIVERSION", "KIND", "VERBS", "STORAGE VERSION", "STORAGE")
	}
	return h
}

// Rows projects each route onto the header's columns.
func (t RouteTable) Rows(wide bool) [][]string {
	rows := make([][]string, 0, len(t.Routes))
	for _, r := range t.Routes {
		where := orNone(r.KeyPrefix)
		if r.ProxiedTo != "" {
			// Not in etcd: say where instead.
			where = "proxied to " + r.ProxiedTo
		}
		row := []string{r.Path, orNone(r.Scope), where, r.Decorator}
		if wide {
			row = append(row, r.APIVersion(), r.Kind, orNone(strings.Join(r.Verbs, ",")), orNone(r.StorageVersion), r.Storage)
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

// InGroups is the table with only the routes of the named API groups;
// "core" or "" names the core group, as `kubectl api-resources --api-group`
// takes it. No groups keeps every route.
func (t RouteTable) InGroups(groups []string) RouteTable {
	if len(groups) == 0 {
		return t
	}
	want := map[string]bool{}
	for _, g := range groups {
		if g == "core" {
			g = ""
		}
		want[g] = true
	}
	out := t
	out.Routes = nil
	for _, r := range t.Routes {
		if want[r.Group] {
			out.Routes = append(out.Routes, r)
		}
	}
	return out
}

// Groups lists the API groups of the table's routes in table order, the
// core group as "core".
func (t RouteTable) Groups() []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range t.Routes {
		g := r.Group
		if g == "" {
			g = "core"
		}
		if !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	return out
}
