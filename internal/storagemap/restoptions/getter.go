// Package restoptions is the RESTOptionsGetter regctl's stores are built
// through: the server's own, wrapped to record what it decides for each
// resource (key prefix, storage version, media type, codec, transformer,
// etcd servers, decorator) and to hand the stores lazy, undecorated
// storage instead of the server's watch cache.
package restoptions

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/value"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/routetable"
)

// Decision is what the server's RESTOptionsGetter decided for one resource.
type Decision struct {
	ResourcePrefix string
	EtcdPrefix     string
	Decorator      string
	MediaType      string
	StorageVersion string
	EtcdServers    []string
	Encryption     string

	Transformer value.Transformer
	Transport   storagebackend.TransportConfig

	// Getter is the server's getter that decided.
	Getter generic.RESTOptionsGetter
	// Server is what the server's getter returned, before regctl turned
	// its loops off and swapped its decorator: what `routes describe`
	// shows.
	Server generic.RESTOptions
	// Call is what the store's CompleteWithOptions handed the decorator,
	// nil until a store of the resource was completed.
	Call *DecoratorCall
}

// DecoratorCall is what a store's CompleteWithOptions passes its storage
// decorator: the key and attribute functions, and the triggers and
// indexers a watch cache would index by (its StoreOptions').
type DecoratorCall struct {
	ResourcePrefix string
	KeyFunc        func(obj apiruntime.Object) (string, error)
	AttrFunc       storage.AttrFunc
	Triggers       storage.IndexerFuncs
	Indexers       *cache.Indexers
}

// Getter wraps the server's RESTOptionsGetter. It records what the
// server chose for each resource, then hands regctl's stores undecorated
// storage, created on first use, with every background loop off: no watch
// cache, no reflector, no compaction, no metric polling ever runs against
// the user's etcd.
type Getter struct {
	Delegate generic.RESTOptionsGetter
	// MainServers is --etcd-servers (or regctl's ephemeral etcd): a resource
	// stored elsewhere (--etcd-servers-overrides) names its servers in the
	// route table, the rest do not, so a table does not depend on where a
	// cluster's etcd is.
	MainServers []string
	// Encryption tells the write provider of a resource.
	Encryption func(schema.GroupResource) string
	// Timeout bounds each request of the stores.
	Timeout time.Duration
	// Preflight checks servers other than the main ones before a store
	// first dials them.
	Preflight func(context.Context, storagebackend.TransportConfig) error
	// typer names the kinds of the examples stores pass: kube-apiserver's
	// legacyscheme when nil, the apiextensions or aggregator scheme for the
	// getters of those servers (see ForServer).
	typer apiruntime.ObjectTyper
	// CustomResource stands in for the example a custom resource store
	// does not pass (it asks with nil): an object of its storage version,
	// which its CRD decides, not the codec.
	CustomResource func(schema.GroupResource) (example apiruntime.Object, storageVersion string, ok bool)
	// root records the decisions of a getter made by ForServer, so that
	// routes and handles find every server's in one place.
	root *Getter

	mu        sync.Mutex
	decisions map[schema.GroupResource]Decision
}

// ForServer wraps the RESTOptionsGetter of another server of kube-apiserver's
// chain (apiextensions, aggregator, custom resources) the same way, and
// records its decisions with g's.
func (g *Getter) ForServer(delegate generic.RESTOptionsGetter, typer apiruntime.ObjectTyper) *Getter {
	return &Getter{
		Delegate:    delegate,
		MainServers: g.MainServers,
		Encryption:  g.Encryption,
		Timeout:     g.Timeout,
		Preflight:   g.Preflight,
		typer:       typer,
		root:        g.recorder(),
	}
}

func (g *Getter) recorder() *Getter {
	if g.root != nil {
		return g.root
	}
	return g
}

func (g *Getter) GetRESTOptions(resource schema.GroupResource, example apiruntime.Object) (generic.RESTOptions, error) {
	opts, err := g.Delegate.GetRESTOptions(resource, example)
	if err != nil {
		return opts, err
	}
	transport := opts.StorageConfig.Transport
	transport.ServerList = append([]string(nil), transport.ServerList...)
	d := Decision{
		ResourcePrefix: opts.ResourcePrefix,
		EtcdPrefix:     opts.StorageConfig.Prefix,
		Decorator:      decoratorName(opts.Decorator),
		Encryption:     g.Encryption(resource),
		Transformer:    opts.StorageConfig.Transformer,
		Transport:      transport,
		Getter:         g.Delegate,
		Server:         opts,
	}
	server := *opts.StorageConfig
	d.Server.StorageConfig = &server
	var preflight func(context.Context) error
	if !slices.Equal(transport.ServerList, g.MainServers) {
		d.EtcdServers = transport.ServerList
		preflight = func(ctx context.Context) error { return g.Preflight(ctx, transport) }
	}
	storageVersion := ""
	if example == nil && g.CustomResource != nil {
		var ok bool
		if example, storageVersion, ok = g.CustomResource(resource); !ok {
			return opts, fmt.Errorf("%s is not a custom resource of a CRD regctl read", resource)
		}
	}
	if d.StorageVersion, err = g.storageVersionOf(opts, example, storageVersion); err != nil {
		return opts, fmt.Errorf("finding the storage version of %s: %w", resource, err)
	}
	if d.MediaType, err = mediaTypeOf(opts, example); err != nil {
		return opts, fmt.Errorf("finding the storage media type of %s: %w", resource, err)
	}
	r := g.recorder()
	r.mu.Lock()
	if r.decisions == nil {
		r.decisions = map[schema.GroupResource]Decision{}
	}
	r.decisions[resource] = d
	r.mu.Unlock()

	opts.Decorator = lazyUndecorated(g.Timeout, preflight, func(c DecoratorCall) {
		r.mu.Lock()
		defer r.mu.Unlock()
		d := r.decisions[resource]
		d.Call = &c
		r.decisions[resource] = d
	})
	opts.CountMetricPollPeriod = 0
	opts.StorageConfig.CompactionInterval = 0
	opts.StorageConfig.DBMetricPollInterval = 0
	return opts, nil
}

// Decision is what the server decided for gr, false when no store of gr
// was built through g or the getters made from it.
func (g *Getter) Decision(gr schema.GroupResource) (Decision, bool) {
	r := g.recorder()
	r.mu.Lock()
	defer r.mu.Unlock()
	d, ok := r.decisions[gr]
	return d, ok
}

// decoratorName tells which decorator the server picked from the function
// value itself, not by re-deriving the server's rules: UndecoratedStorage by
// identity, and the watch cache by being a closure made by StorageWithCacher.
// The compiler may inline StorageWithCacher into its caller, which renames
// the closure to <caller>.StorageWithCacher.funcN, so match on that part.
func decoratorName(d generic.StorageDecorator) string {
	name := funcName(d)
	switch {
	case name == funcName(generic.UndecoratedStorage):
		return routetable.DecoratorUndecorated
	case strings.Contains(name, "."+shortName(funcName(genericregistry.StorageWithCacher))+".func"):
		return routetable.DecoratorCacher
	}
	return name
}

func funcName(fn any) string {
	return runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()
}

// shortName drops the package path: a/b/registry.StorageWithCacher → StorageWithCacher.
func shortName(name string) string {
	return name[strings.LastIndex(name, ".")+1:]
}

// storageVersionOf asks the storage codec's encode versioner which version
// the example's kind is written in; a custom resource's is known already.
func (g *Getter) storageVersionOf(opts generic.RESTOptions, example apiruntime.Object, known string) (string, error) {
	if known != "" {
		return known, nil
	}
	var typer apiruntime.ObjectTyper = legacyscheme.Scheme
	if g.typer != nil {
		typer = g.typer
	}
	kinds, _, err := typer.ObjectKinds(example)
	if err != nil {
		return "", err
	}
	gvk, ok := opts.StorageConfig.EncodeVersioner.KindForGroupVersionKinds(kinds)
	if !ok {
		return "", fmt.Errorf("no storage version for %v", kinds)
	}
	return gvk.GroupVersion().String(), nil
}

// mediaTypeOf encodes the example with the storage codec the server chose and
// reports what kind of bytes came out, i.e. what would land in etcd.
func mediaTypeOf(opts generic.RESTOptions, example apiruntime.Object) (string, error) {
	data, err := apiruntime.Encode(opts.StorageConfig.Codec, example.DeepCopyObject())
	if err != nil {
		return "", err
	}
	return etcdview.MediaType(data), nil
}
