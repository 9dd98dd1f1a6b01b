// Package storagemap builds kube-apiserver's storage map with the server's
// own code: its option structs and defaults, its storage factory and
// RESTOptionsGetter, its REST storage providers (every built-in group), and
// the apiextensions and aggregator servers' stores with the custom resources
// of the CRDs in etcd. Open returns a Session, what a command connects to
// (etcd, a snapshot or a sandbox; clients, feature gates, allocators, the
// loopback), holding the Map: a route and a handle per path, and the
// resolver from what a user names to a handle. Commands hand on the map,
// or single handles, never the session.
//
// Each concern of the assembly is a package of its own under this one
// (serverflags, encryption, restoptions, served, reach, extensions,
// schemaless, names, clusterips); this package puts them together, in the
// server's order (build.go), and holds what a command uses of the result
// (session.go, map.go, resolve.go).
package storagemap

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	genericapiserver "k8s.io/apiserver/pkg/server"
	serveroptions "k8s.io/apiserver/pkg/server/options"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	controlplaneapiserver "k8s.io/kubernetes/pkg/controlplane/apiserver"
	"k8s.io/kubernetes/pkg/kubeapiserver"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/etcdview/embedded"
	"github.com/regctl/regctl/internal/etcdview/snapshot"
	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/storagemap/clusterips"
	"github.com/regctl/regctl/internal/storagemap/encryption"
	"github.com/regctl/regctl/internal/storagemap/extensions"
	"github.com/regctl/regctl/internal/storagemap/names"
	"github.com/regctl/regctl/internal/storagemap/reach"
	"github.com/regctl/regctl/internal/storagemap/restoptions"
	"github.com/regctl/regctl/internal/storagemap/served"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
	"github.com/regctl/regctl/internal/storagemap/wiring"
)

// Config says which etcd to build against and how patiently.
type Config struct {
	Options *serverflags.Options
	// Only names the resources a command works on, comma-separated as
	// `get` takes them (categories included); the map then installs only
	// their routes (needed). Empty, with no Kinds, builds every path.
	Only string
	// Timeout bounds dialing etcd and each request regctl makes.
	Timeout time.Duration
	// Snapshot is an etcd snapshot file to read instead of a live etcd.
	Snapshot string
	// DataDir is a data directory to run an embedded etcd on and build the
	// map on, instead of the etcd of --etcd-servers: a sandbox that keeps
	// its data from one command to the next.
	DataDir string
	// FieldManagement builds custom resources' field managers on the
	// OpenAPI models of their CRD's schema, as the server does, for a
	// command that writes: a read has no use for what they cost to build.
	// Without it a custom resource's field manager deduces types from the
	// objects it sees.
	FieldManagement bool
	// Kinds, for a command that writes a manifest (Only empty), are the
	// kinds of its objects: the map installs their routes and namespaces'
	// (needed), and reads only the CRDs of their groups that no built-in
	// resource serves, as a manifest's objects are mapped by group and kind.
	Kinds []schema.GroupVersionKind
	// CRDRevision, when set, builds the custom resources' paths from the
	// CRDs as etcd held them at that revision, not as it holds them now:
	// what a comparison with that revision reads its objects through.
	CRDRevision int64
	// Writes marks a command that writes: on the etcd of a cluster that
	// runs another release than this build's, it is refused unless
	// ReleaseMismatch is MismatchIgnore (checkRelease).
	Writes          bool
	ReleaseMismatch string
	// Warn, when set, says what the command should know of the data
	// (a cluster of another release) on stderr; Note what it did besides
	// what it was asked (a new sandbox).
	Warn, Note func(string)
	// Leftovers, for a command that reads, serves a name RESOURCE.GROUP
	// that no CRD serves but whose objects etcd still holds through a
	// CRD made up from them (extensions.Chain.Leftovers), which warns of it.
	Leftovers bool

	// embedded is the sandbox's etcd, already running, that Reopen hands
	// from one map to the next.
	embedded *embedded.Etcd
	// beside is an etcd another session runs in this process, which this
	// one reads without holding it (Beside).
	beside *embedded.Etcd
}

// Open instantiates the storage map the way kube-apiserver does, on the
// etcd cfg names, and returns the session holding both. With no
// --etcd-servers it starts an ephemeral embedded etcd for the purpose.
func Open(ctx context.Context, cfg Config) (*Session, error) {
	s := &Session{Map: &Map{}}
	if cfg.embedded != nil {
		// Held from the start, so that a failure below stops it.
		s.holdEmbedded(cfg.embedded)
	}
	ok := false
	// Whatever was started before a failure, or a panic in the server's
	// code (an embedded etcd and its data directory, etcd clients), is
	// stopped here.
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	if err := s.assemble(ctx, cfg); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

// assemble puts the session together in kube-apiserver's order. Each step
// registers what undoes it (onClose), and Close runs them last first.
func (s *Session) assemble(ctx context.Context, cfg Config) error {
	if err := s.applyVersions(ctx, cfg); err != nil {
		return err
	}
	etcd, err := s.connect(ctx, cfg)
	if err != nil {
		return err
	}
	st, err := s.storageOf(ctx, cfg, etcd)
	if err != nil {
		return err
	}
	return s.build(ctx, cfg, etcd, st)
}

// applyVersions applies the flags' emulated version and feature gates to
// the process until the session is closed.
func (s *Session) applyVersions(ctx context.Context, cfg Config) error {
	release, err := cfg.Options.Apply(ctx)
	if err != nil {
		return err
	}
	s.onClose(func() {
		if err := release(); err != nil {
			s.mu.Lock()
			s.closeErr = errors.Join(s.closeErr, err)
			s.mu.Unlock()
		}
	})
	return nil
}

// connect finds the etcd cfg names (a snapshot served in-process, a
// sandbox or an ephemeral etcd started here, or --etcd-servers), checks
// that it answers, and returns the server's etcd options for it, with
// everything that would write to it or poll it off.
func (s *Session) connect(ctx context.Context, cfg Config) (serveroptions.EtcdOptions, error) {
	etcd := *cfg.Options.Server.Etcd
	etcd.StorageConfig.Transport.ServerList = append([]string(nil), etcd.StorageConfig.Transport.ServerList...)
	if cfg.Snapshot != "" && cfg.DataDir != "" {
		return etcd, errors.New("`--snapshot` and `--data-dir` name two etcds: give one")
	}
	if cfg.Snapshot != "" {
		// The snapshot is the one etcd read: the servers a manifest or
		// the environment name, and per-resource overrides, whose keys
		// are in other etcds and not in this snapshot, do not apply.
		etcd.EtcdServersOverrides = nil
		snap, err := snapshot.Open(cfg.Snapshot)
		if err != nil {
			return etcd, err
		}
		s.Snapshot = snap
		s.onClose(func() { snap.Close() })
		// Every command reads the snapshot, which indexes it: checked
		// here, a damaged file is told as such, not as what a store's
		// read of it failed with.
		if err := snap.Check(); err != nil {
			return etcd, err
		}
		// The snapshot is served in this process, in plain text.
		etcd.StorageConfig.Transport = storagebackend.TransportConfig{ServerList: []string{snap.ClientURL}}
	}
	if cfg.beside != nil {
		etcd.StorageConfig.Transport.ServerList = []string{cfg.beside.ClientURL}
	}
	if len(etcd.StorageConfig.Transport.ServerList) == 0 {
		if s.Embedded == nil {
			e, err := startEmbedded(cfg)
			if err != nil {
				return etcd, err
			}
			s.holdEmbedded(e)
		}
		etcd.StorageConfig.Transport.ServerList = []string{s.Embedded.ClientURL}
	} else if cfg.DataDir != "" {
		return etcd, errors.New("`--data-dir` and `--etcd-servers` name two etcds: give one")
	}
	s.transport = etcd.StorageConfig.Transport
	s.timeout = cfg.Timeout
	// The server's etcd client waits 20s for a dead endpoint; find out
	// quickly instead, with a read that changes nothing, and say why.
	if _, err := s.Client(ctx); err != nil {
		return etcd, err
	}
	if errs := etcd.Validate(); len(errs) > 0 {
		return etcd, fmt.Errorf("checking etcd flags: %w", utilerrors.NewAggregate(errs))
	}
	if err := mergeWatchCacheSizes(&etcd); err != nil {
		return etcd, err
	}
	// regctl never compacts or polls the user's etcd.
	etcd.StorageConfig.CompactionInterval = 0
	etcd.StorageConfig.DBMetricPollInterval = 0
	etcd.StorageConfig.CountMetricPollPeriod = 0
	return etcd, nil
}

// storage is what the server's stores are built through: its generic
// config, its storage factory, the encryption config, and the recording
// RESTOptionsGetter on them.
type storage struct {
	generic *genericapiserver.Config
	factory serverstorage.StorageFactory
	enc     *encryption.Config
	getter  *restoptions.Getter
}

// storageOf builds the storage factory and RESTOptionsGetter on etcd as
// BuildGenericConfig does, once the cluster's release is known to be this
// build's (or the command is told of it).
func (s *Session) storageOf(ctx context.Context, cfg Config, etcd serveroptions.EtcdOptions) (storage, error) {
	opts := cfg.Options.Server
	generic, err := genericConfig(opts)
	if err != nil {
		return storage{}, err
	}
	// As BuildGenericConfig: storage versions follow the effective version.
	factoryConfig := kubeapiserver.NewStorageFactoryConfigEffectiveVersion(generic.EffectiveVersion)
	factoryConfig.APIResourceConfig = generic.MergedResourceConfig
	factoryConfig.DefaultResourceEncoding.SetEffectiveVersion(generic.EffectiveVersion)
	factory, err := factoryConfig.Complete(&etcd).New()
	if err != nil {
		return storage{}, fmt.Errorf("building the storage factory: %w", err)
	}
	if err := s.checkRelease(ctx, cfg, factory, etcd.StorageConfig.Prefix); err != nil {
		return storage{}, err
	}
	enc, err := encryption.Load(ctx, etcd.EncryptionProviderConfigFilepath, cfg.Timeout)
	if err != nil {
		return storage{}, err
	}
	s.onClose(enc.Stop)
	return storage{generic: generic, factory: factory, enc: enc, getter: &restoptions.Getter{
		Delegate:    etcd.CreateRESTOptionsGetter(factory, enc.Transformers),
		MainServers: s.transport.ServerList,
		Encryption:  enc.WriterOf,
		Timeout:     cfg.Timeout,
		Preflight: func(ctx context.Context, tc storagebackend.TransportConfig) error {
			_, err := s.clientOn(ctx, tc)
			return err
		},
	}}, nil
}

// build builds the map through st: the providers' stores, the rest of the
// server's chain (CRDs, custom resources, APIServices) as far as the
// command needs it, the installer's discovery of what it touches, the
// loopback client and allocators the stores call, and the route table and
// handles.
func (s *Session) build(ctx context.Context, cfg Config, etcd serveroptions.EtcdOptions, st storage) error {
	opts := cfg.Options.Server
	lb := &loopback{timeout: cfg.Timeout}
	providers, informers, err := storageProviders(opts, st.generic, st.factory, lb.config())
	if err != nil {
		return err
	}
	s.onClose(s.destroy)
	all, err := groupVersions(providers, st.generic.MergedResourceConfig, st.getter, st.generic)
	if err != nil {
		return err
	}
	// The CRDs and APIServices in etcd are read unless every resource a
	// command names is a built-in one: kubectl resolves a name to a
	// built-in resource before any custom one.
	if s.Map.mapper, s.Map.categories, err = names.Mapper(all); err != nil {
		return err
	}
	readEtcd, crdNames, crdGroups := s.Map.crdsNeeded(cfg)
	if cfg.CRDRevision > 0 {
		// A compacted or future revision is one line naming the oldest
		// or the current one. Which CRDs a name names is known of the
		// CRDs now only.
		if err := etcdview.CheckRevisionOn(ctx, s.Client, cfg.CRDRevision); err != nil {
			return err
		}
		crdNames, crdGroups = nil, nil
	}
	s.models = &served.Models{}
	c := extensions.Chain{Server: opts, Etcd: etcd, Transformers: st.enc.Transformers, Getter: st.getter, Models: s.models,
		FieldManagement: cfg.FieldManagement, CRDNames: crdNames, CRDGroups: crdGroups, CRDRevision: cfg.CRDRevision, Client: s.Client,
		Admission: namespaceAdmission{m: s.Map}, Authorizer: st.generic.Authorization.Authorizer}
	if err := s.Map.extend(ctx, c, all, readEtcd, cfg.Only, cfg.Leftovers); err != nil {
		return err
	}
	s.schemalessCRDs = c.SchemalessCRDs
	in := served.NewInstaller(s.models, c.Admission, c.Authorizer)
	versions, err := s.installNeeded(in, cfg)
	if err != nil {
		return err
	}
	lb.bind(s.servingInstalled(in), st.generic)
	s.loopback = lb
	if s.clusterIPs, err = clusterips.New(informers, opts.ServiceClusterIPRanges, cfg.Timeout); err != nil {
		return err
	}
	// Registered after destroy, so it runs first: the informers stop before
	// the stores they watch through.
	s.onClose(s.clusterIPs.Stop)
	s.getter = st.getter
	s.Map.getter = st.getter
	s.Map.watchCache = watchCacheReason(etcd, cfg.Options.Server.Etcd.WatchCacheSizes)
	s.Map.readers = st.enc.ReadersOf
	flags := cfg.Options.Server.Etcd.StorageConfig
	s.Map.loops = wiring.Loops{CountMetricPollPeriod: flags.CountMetricPollPeriod, CompactionInterval: flags.CompactionInterval, DBMetricPollInterval: flags.DBMetricPollInterval}
	s.Map.container = in.Container
	s.Map.reaches = map[string]reach.Path{}
	for _, v := range versions {
		for p, o := range reach.Of(v.Installed()) {
			if o.SharesWith != "" {
				o.SharesWith = served.RoutePath(v, o.SharesWith)
			}
			s.Map.reaches[served.RoutePath(v, p)] = o
		}
	}
	emulated, gates := cfg.Options.Effective()
	s.Map.Table = routetable.RouteTable{
		FormatVersion:     routetable.FormatVersion,
		KubernetesVersion: serverflags.KubernetesVersion(),
		EmulatedVersion:   emulated,
		FeatureGates:      gates,
		EtcdPrefix:        etcd.StorageConfig.Prefix,
		Routes:            append(served.Routes(versions, s.Map.reaches, st.getter), s.Map.proxied...),
	}
	s.Map.installed = versions
	s.Map.Handles = s.handles(versions)
	return nil
}

// extend adds to the built-in versions the rest of the server's chain
// (Chain.Extend), and the names of all to its mapper. A name the CRDs it
// names (c.CRDNames) do not serve is looked for among the CRDs of the
// groups it names (c.CRDGroups), then among all CRDs, for the whole map's
// error and suggestions.
func (m *Map) extend(ctx context.Context, c extensions.Chain, builtIn []served.Version, readEtcd bool, only string, leftovers bool) error {
	for {
		m.notEstablished = map[schema.GroupVersionKind]string{}
		c.NotEstablished = m.notEstablished
		all, proxied, crs, err := c.Extend(ctx, builtIn, readEtcd)
		if errors.Is(err, extensions.ErrUndecided) {
			c.CRDNames = nil
			continue
		}
		if err != nil {
			return err
		}
		m.versions, m.crs, m.proxied = all, crs, proxied
		if m.mapper, m.categories, err = names.Mapper(all); err != nil {
			return err
		}
		switch {
		case only == "" || m.resolvesAll(only):
			return nil
		case c.CRDNames != nil:
			c.CRDNames = nil
		case c.CRDGroups != nil:
			c.CRDGroups = nil
		case leftovers && c.MadeUp == nil && readEtcd:
			// Every CRD is read, and a name still serves nothing: its
			// objects may be left from a CRD that is gone.
			if c.MadeUp, err = c.Leftovers(ctx, only, m.servesName); err != nil || len(c.MadeUp) == 0 {
				return err
			}
		default:
			return nil
		}
	}
}

// installNeeded installs what the command cfg is for touches (needed),
// and returns the versions it installed, whole or in part: the installer's
// routes are most of what building the map costs.
func (s *Session) installNeeded(in *served.Installer, cfg Config) ([]served.Version, error) {
	need := s.Map.needed(cfg)
	var out []served.Version
	for i := range s.Map.versions {
		resources, ok := need[s.Map.versions[i].GV]
		if !ok {
			continue
		}
		if err := in.Install(&s.Map.versions[i], resources); err != nil {
			return nil, err
		}
		out = append(out, s.Map.versions[i])
	}
	return out, nil
}

// servingInstalled is the map's container for the loopback client, which
// first installs the API version a request is for when the command did not
// need it: the core stores call the server's own API (services allocate
// through networking.k8s.io's IPAddresses and ServiceCIDRs). A request for
// a custom resource goes to its CRD's handler, built on the first, as the
// apiextensions server hands it on.
func (s *Session) servingInstalled(in *served.Installer) http.Handler {
	var mu sync.Mutex
	return http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		if h := s.Map.customResourceHandler(req); h != nil {
			h.ServeHTTP(rw, req)
			return
		}
		if info, ok := genericapirequest.RequestInfoFrom(req.Context()); ok && info.IsResourceRequest {
			gv := schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}
			mu.Lock()
			for i := range s.Map.versions {
				if v := &s.Map.versions[i]; v.GV == gv && (v.Resources == nil || v.Partial) {
					if err := in.Install(v, nil); err != nil {
						mu.Unlock()
						http.Error(rw, err.Error(), http.StatusInternalServerError)
						return
					}
				}
			}
			mu.Unlock()
		}
		in.Container.ServeHTTP(rw, req)
	})
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

// groupVersions is kube-apiserver's InstallAPIs up to the installer: each
// provider's REST storage, in the server's order, less the groups the
// resource config disables and the kinds the server has stopped serving at
// its version.
func groupVersions(providers []controlplaneapiserver.RESTStorageProvider, resourceConfig serverstorage.APIResourceConfigSource, getter generic.RESTOptionsGetter, cfg *genericapiserver.Config) ([]served.Version, error) {
	expiration, err := genericapiserver.NewResourceExpirationEvaluatorFromOptions(genericapiserver.ResourceExpirationEvaluatorOptions{
		CurrentVersion:                          cfg.EffectiveVersion.EmulationVersion(),
		Prerelease:                              cfg.EffectiveVersion.BinaryVersion().PreRelease(),
		EmulationForwardCompatible:              cfg.EmulationForwardCompatible,
		RuntimeConfigEmulationForwardCompatible: cfg.RuntimeConfigEmulationForwardCompatible,
	})
	if err != nil {
		return nil, err
	}
	var out []served.Version
	for _, p := range providers {
		group := p.GroupName()
		info, err := p.NewRESTStorage(resourceConfig, getter)
		if err != nil {
			return nil, fmt.Errorf("creating the REST storage of API group %q: %w", group, err)
		}
		if len(info.VersionedResourcesStorageMap) == 0 {
			continue
		}
		if err := expiration.RemoveUnavailableKinds(group, info.Scheme, info.VersionedResourcesStorageMap, resourceConfig); err != nil {
			return nil, err
		}
		versions, err := served.VersionsOf(&info, wiring.Provider{Value: p, Method: "NewRESTStorage"})
		if err != nil {
			return nil, err
		}
		out = append(out, versions...)
	}
	if len(out) == 0 {
		return nil, errors.New("`--runtime-config` disables every API group: the map is empty")
	}
	return out, nil
}
