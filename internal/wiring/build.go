package wiring

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"net"
	gopath "path"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	serveroptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/server/options/encryptionconfig"
	"k8s.io/apiserver/pkg/server/resourceconfig"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/value"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	apiserveroptions "k8s.io/kubernetes/cmd/kube-apiserver/app/options"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/controlplane"
	cpoptions "k8s.io/kubernetes/pkg/controlplane/apiserver/options"
	"k8s.io/kubernetes/pkg/kubeapiserver"
	corerest "k8s.io/kubernetes/pkg/registry/core/rest"
	"k8s.io/kubernetes/pkg/serviceaccount"
	netutils "k8s.io/utils/net"

	"github.com/regctl/regctl/internal/etcdview"
)

// Config says which etcd to build against and how patiently.
type Config struct {
	Options *Options
	// Timeout bounds dialing etcd and each request regctl makes.
	Timeout time.Duration
}

// Wiring is the instantiated core storage map.
type Wiring struct {
	Table RouteTable
	// Stores holds regctl's own storage for each path, built by the server's
	// code but with undecorated storage (no watch cache).
	Stores map[string]rest.Storage
	// Embedded is the ephemeral etcd the map was built on when no
	// --etcd-servers was given, nil otherwise.
	Embedded *etcdview.Embedded

	// Resources is the server's discovery of /api/v1, one entry per path.
	Resources []metav1.APIResource

	owners    map[string]owner
	getter    *recordingGetter
	client    *clientv3.Client
	transport storagebackend.TransportConfig
	timeout   time.Duration
	closers   []func()
}

// Close releases the stores' etcd clients and the embedded etcd, if any.
func (w *Wiring) Close() error {
	for i := len(w.closers) - 1; i >= 0; i-- {
		w.closers[i]()
	}
	w.closers = nil
	return nil
}

// GenericStore returns the generic registry Store through which a path
// reaches etcd (its own, or the one it shares), or nil for a path that never
// touches etcd.
func (w *Wiring) GenericStore(path string) *genericregistry.Store {
	return w.owners[path].store
}

// Client is a plain etcd client on the etcd the map was built on, for reads
// that go around the stores (keys, raw values). It is dialed on first use.
func (w *Wiring) Client(ctx context.Context) (*clientv3.Client, error) {
	if w.client != nil {
		return w.client, nil
	}
	c, err := etcdview.Connect(ctx, w.transport, w.timeout)
	if err != nil {
		return nil, err
	}
	w.client = c
	w.closers = append(w.closers, func() { c.Close() })
	return c, nil
}

// Transformer is the storage transformer (encryption) of the store behind
// path, or nil when values are stored as they are encoded.
func (w *Wiring) Transformer(path string) value.Transformer {
	store := w.GenericStore(path)
	if store == nil {
		return nil
	}
	d, _ := w.getter.decision(store.DefaultQualifiedResource)
	return d.transformer
}

// EtcdKey is the etcd key the store of path uses for the object name in the
// namespace carried by ctx: the store's own KeyFunc, under the etcd prefix
// the storage layer puts in front of it.
func (w *Wiring) EtcdKey(ctx context.Context, path, name string) (string, error) {
	store := w.GenericStore(path)
	if store == nil {
		return "", fmt.Errorf("%s is not stored in etcd", path)
	}
	key, err := store.KeyFunc(ctx, name)
	if err != nil {
		return "", err
	}
	return w.underEtcdPrefix(key), nil
}

// EtcdKeyPrefix is the prefix of every key the store of path holds in the
// namespace carried by ctx (all namespaces when there is none), ending in "/".
func (w *Wiring) EtcdKeyPrefix(ctx context.Context, path string) (string, error) {
	store := w.GenericStore(path)
	if store == nil {
		return "", fmt.Errorf("%s is not stored in etcd", path)
	}
	return w.underEtcdPrefix(store.KeyRootFunc(ctx)) + "/", nil
}

// underEtcdPrefix puts a store key under --etcd-prefix, as the etcd3 storage
// layer does.
func (w *Wiring) underEtcdPrefix(key string) string {
	return strings.TrimSuffix(gopath.Join("/", w.Table.EtcdPrefix), "/") + "/" + strings.TrimPrefix(key, "/")
}

// Build instantiates the core storage map the way kube-apiserver does. With
// no --etcd-servers it starts an ephemeral embedded etcd for the purpose.
func Build(ctx context.Context, cfg Config) (*Wiring, error) {
	w := &Wiring{}
	if err := w.assemble(ctx, cfg); err != nil {
		// Whatever was started before the failure (an embedded etcd, etcd
		// clients) is stopped here.
		w.Close()
		return nil, err
	}
	return w, nil
}

func (w *Wiring) assemble(ctx context.Context, cfg Config) error {
	s := cfg.Options.Server
	etcd := *s.Etcd
	etcd.StorageConfig.Transport.ServerList = append([]string(nil), etcd.StorageConfig.Transport.ServerList...)

	userServers := len(etcd.StorageConfig.Transport.ServerList) > 0
	if !userServers {
		e, err := etcdview.StartEmbedded(nil)
		if err != nil {
			return err
		}
		w.Embedded = e
		w.closers = append(w.closers, func() { e.Close() })
		etcd.StorageConfig.Transport.ServerList = []string{e.ClientURL}
	} else {
		// The server's etcd client waits 20s for a dead endpoint; find out
		// quickly instead, with a Status call that writes nothing.
		c, err := etcdview.Connect(ctx, etcd.StorageConfig.Transport, cfg.Timeout)
		if err != nil {
			return err
		}
		w.client = c
		w.closers = append(w.closers, func() { c.Close() })
	}
	w.transport = etcd.StorageConfig.Transport
	w.timeout = cfg.Timeout
	if errs := etcd.Validate(); len(errs) > 0 {
		return fmt.Errorf("checking etcd flags: %w", utilerrors.NewAggregate(errs))
	}
	if err := mergeWatchCacheSizes(&etcd); err != nil {
		return err
	}
	// regctl never compacts or polls the user's etcd.
	etcd.StorageConfig.CompactionInterval = 0
	etcd.StorageConfig.DBMetricPollInterval = 0
	etcd.StorageConfig.CountMetricPollPeriod = 0

	resourceConfig, err := resourceconfig.MergeAPIResourceConfigs(controlplane.DefaultAPIResourceConfigSource(), s.APIEnablement.RuntimeConfig, legacyscheme.Scheme)
	if err != nil {
		return fmt.Errorf("reading `--runtime-config`: %w", err)
	}
	factoryConfig := kubeapiserver.NewStorageFactoryConfig()
	factoryConfig.APIResourceConfig = resourceConfig
	factory, err := factoryConfig.Complete(&etcd).New()
	if err != nil {
		return fmt.Errorf("building the storage factory: %w", err)
	}
	transformers, err := loadTransformers(ctx, &etcd)
	if err != nil {
		return err
	}
	getter := newRecordingGetter(etcd.CreateRESTOptionsGetter(factory, transformers), userServers)

	coreConfig, err := coreStorageConfig(s, factory)
	if err != nil {
		return err
	}
	provider, err := corerest.New(coreConfig, authorizerfactory.NewAlwaysDenyAuthorizer())
	if err != nil {
		return fmt.Errorf("creating the core storage provider: %w", err)
	}
	info, err := provider.NewRESTStorage(resourceConfig, getter)
	if err != nil {
		return fmt.Errorf("creating the core REST storage: %w", err)
	}
	w.Stores = info.VersionedResourcesStorageMap["v1"]
	w.closers = append(w.closers, func() { destroyAll(w.Stores) })

	discovered, err := discover(&info)
	if err != nil {
		return err
	}
	w.Resources = discovered.APIResources
	w.getter = getter
	w.owners = findOwners(w.Stores)
	w.Table = RouteTable{
		FormatVersion:     FormatVersion,
		KubernetesVersion: KubernetesVersion(),
		EtcdPrefix:        etcd.StorageConfig.Prefix,
		Routes:            routes(w.Stores, w.owners, discovered, getter),
	}
	return nil
}

// mergeWatchCacheSizes applies kube-apiserver's default watch cache sizes
// under the user's --watch-cache-sizes, as the server does when it completes
// its options.
func mergeWatchCacheSizes(etcd *serveroptions.EtcdOptions) error {
	if !etcd.EnableWatchCache {
		return nil
	}
	sizes := kubeapiserver.DefaultWatchCacheSizes()
	userSpecified, err := serveroptions.ParseWatchCacheSizes(etcd.WatchCacheSizes)
	if err != nil {
		return fmt.Errorf("reading `--watch-cache-sizes`: %w", err)
	}
	for resource, size := range userSpecified {
		sizes[resource] = size
	}
	etcd.WatchCacheSizes, err = serveroptions.WriteWatchCacheSizes(sizes)
	return err
}

func loadTransformers(ctx context.Context, etcd *serveroptions.EtcdOptions) (value.ResourceTransformers, error) {
	if etcd.EncryptionProviderConfigFilepath == "" {
		return nil, nil
	}
	enc, err := encryptionconfig.LoadEncryptionConfig(ctx, etcd.EncryptionProviderConfigFilepath, false, "regctl")
	if err != nil {
		return nil, fmt.Errorf("loading `--encryption-provider-config`: %w", err)
	}
	return encryptionconfig.StaticTransformers(enc.Transformers), nil
}

// coreStorageConfig fills corerest.Config as kube-apiserver does from its
// completed options, minus what only a serving apiserver has.
func coreStorageConfig(s *apiserveroptions.ServerRunOptions, factory serverstorage.StorageFactory) (corerest.Config, error) {
	primary, secondary, err := serviceIPRanges(s.ServiceClusterIPRanges)
	if err != nil {
		return corerest.Config{}, err
	}
	// A token generator is what makes serviceaccounts/token exist. regctl
	// never serves tokens; the key is thrown away with the process.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return corerest.Config{}, err
	}
	issuer, err := serviceaccount.JWTTokenGenerator("https://kubernetes.default.svc", key)
	if err != nil {
		return corerest.Config{}, err
	}
	// The loopback client and informers feed controllers that only a serving
	// apiserver starts; they are constructed but never run.
	loopback := &restclient.Config{Host: "https://127.0.0.1:1"}
	client, err := kubernetes.NewForConfig(loopback)
	if err != nil {
		return corerest.Config{}, err
	}
	return corerest.Config{
		GenericConfig: corerest.GenericConfig{
			StorageFactory:       factory,
			EventTTL:             s.EventTTL,
			ServiceAccountIssuer: issuer,
			LoopbackClientConfig: loopback,
			Informers:            informers.NewSharedInformerFactory(client, 0),
		},
		Proxy: corerest.ProxyConfig{KubeletClientConfig: s.KubeletConfig},
		Services: corerest.ServicesConfig{
			ClusterIPRange:          primary,
			SecondaryClusterIPRange: secondary,
			NodePortRange:           s.ServiceNodePortRange,
			IPRepairInterval:        3 * time.Minute,
		},
	}, nil
}

// serviceIPRanges reads --service-cluster-ip-range as kube-apiserver does,
// defaulting the primary range through the server's own ServiceIPRange.
func serviceIPRanges(flag string) (primary, secondary net.IPNet, err error) {
	var cidrs []string
	if flag != "" {
		cidrs = strings.Split(flag, ",")
	}
	var passed net.IPNet
	if len(cidrs) > 0 {
		_, n, err := netutils.ParseCIDRSloppy(cidrs[0])
		if err != nil {
			return primary, secondary, fmt.Errorf("reading `--service-cluster-ip-range`: %q is not a CIDR", cidrs[0])
		}
		passed = *n
	}
	if primary, _, err = cpoptions.ServiceIPRange(passed); err != nil {
		return primary, secondary, fmt.Errorf("reading `--service-cluster-ip-range`: %w", err)
	}
	if len(cidrs) > 1 {
		_, n, err := netutils.ParseCIDRSloppy(cidrs[1])
		if err != nil {
			return primary, secondary, fmt.Errorf("reading `--service-cluster-ip-range`: %q is not a CIDR", cidrs[1])
		}
		secondary = *n
	}
	return primary, secondary, nil
}

func destroyAll(stores map[string]rest.Storage) {
	for _, s := range stores {
		s.Destroy()
	}
}
