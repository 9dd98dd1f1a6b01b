package storagemap

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
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/value"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/routetable"
)

// decision is what the server's RESTOptionsGetter decided for one resource.
type decision struct {
	ResourcePrefix string
	EtcdPrefix     string
	Decorator      string
	MediaType      string
	StorageVersion string
	EtcdServers    []string
	Encryption     string

	transformer value.Transformer
	// codec is the storage codec: how the server decodes a stored value
	// once decrypted.
	codec     apiruntime.Codec
	transport storagebackend.TransportConfig
}

// recordingGetter wraps the server's RESTOptionsGetter. It records what the
// server chose for each resource, then hands regctl's stores undecorated
// storage, created on first use, with every background loop off: no watch
// cache, no reflector, no compaction, no metric polling ever runs against
// the user's etcd.
type recordingGetter struct {
	delegate generic.RESTOptionsGetter
	// mainServers is --etcd-servers (or regctl's ephemeral etcd): a resource
	// stored elsewhere (--etcd-servers-overrides) names its servers in the
	// route table, the rest do not, so a table does not depend on where a
	// cluster's etcd is.
	mainServers []string
	// encryption tells the write provider of a resource.
	encryption func(schema.GroupResource) string
	// timeout bounds each request of the stores.
	timeout time.Duration
	// preflight checks servers other than the main ones before a store
	// first dials them.
	preflight func(context.Context, storagebackend.TransportConfig) error
	// typer names the kinds of the examples stores pass: kube-apiserver's
	// legacyscheme when nil, the apiextensions or aggregator scheme for the
	// getters of those servers (see forServer).
	typer apiruntime.ObjectTyper
	// customResource stands in for the example a custom resource store
	// does not pass (it asks with nil): an object of its storage version,
	// which its CRD decides, not the codec.
	customResource func(schema.GroupResource) (example apiruntime.Object, storageVersion string, ok bool)
	// root records the decisions of a getter made by forServer, so that
	// routes and handles find every server's in one place.
	root *recordingGetter

	mu        sync.Mutex
	decisions map[schema.GroupResource]decision
}

// forServer wraps the RESTOptionsGetter of another server of kube-apiserver's
// chain (apiextensions, aggregator, custom resources) the same way, and
// records its decisions with g's.
func (g *recordingGetter) forServer(delegate generic.RESTOptionsGetter, typer apiruntime.ObjectTyper) *recordingGetter {
	return &recordingGetter{
		delegate:    delegate,
		mainServers: g.mainServers,
		encryption:  g.encryption,
		timeout:     g.timeout,
		preflight:   g.preflight,
		typer:       typer,
		root:        g.recorder(),
	}
}

func (g *recordingGetter) recorder() *recordingGetter {
	if g.root != nil {
		return g.root
	}
	return g
}

func (g *recordingGetter) GetRESTOptions(resource schema.GroupResource, example apiruntime.Object) (generic.RESTOptions, error) {
	opts, err := g.delegate.GetRESTOptions(resource, example)
	if err != nil {
		return opts, err
	}
	transport := opts.StorageConfig.Transport
	transport.ServerList = append([]string(nil), transport.ServerList...)
	d := decision{
		ResourcePrefix: opts.ResourcePrefix,
		EtcdPrefix:     opts.StorageConfig.Prefix,
		Decorator:      decoratorName(opts.Decorator),
		Encryption:     g.encryption(resource),
		transformer:    opts.StorageConfig.Transformer,
		codec:          opts.StorageConfig.Codec,
		transport:      transport,
	}
	var preflight func(context.Context) error
	if !slices.Equal(transport.ServerList, g.mainServers) {
		d.EtcdServers = transport.ServerList
		preflight = func(ctx context.Context) error { return g.preflight(ctx, transport) }
	}
	storageVersion := ""
	if example == nil && g.customResource != nil {
		var ok bool
		if example, storageVersion, ok = g.customResource(resource); !ok {
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
	r.decisions[resource] = d
	r.mu.Unlock()

	opts.Decorator = lazyUndecorated(g.timeout, preflight)
	opts.CountMetricPollPeriod = 0
	opts.StorageConfig.CompactionInterval = 0
	opts.StorageConfig.DBMetricPollInterval = 0
	return opts, nil
}

func (g *recordingGetter) decision(gr schema.GroupResource) (decision, bool) {
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
func (g *recordingGetter) storageVersionOf(opts generic.RESTOptions, example apiruntime.Object, known string) (string, error) {
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
