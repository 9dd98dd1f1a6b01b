package storagemap

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	"k8s.io/apiserver/pkg/storage/storagebackend"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/etcdview/embedded"
	"github.com/regctl/regctl/internal/etcdview/snapshot"
	"github.com/regctl/regctl/internal/logs"
	"github.com/regctl/regctl/internal/storagemap/clusterips"
	"github.com/regctl/regctl/internal/storagemap/extensions"
	"github.com/regctl/regctl/internal/storagemap/restoptions"
	"github.com/regctl/regctl/internal/storagemap/served"
)

// Session is what a command connects to and holds while it runs: the etcd
// (live, a snapshot served in-process, or a sandbox), its clients, the
// process-wide feature gates of the flags, the allocators and the loopback
// client the stores call, and the map built on them. Close releases it all,
// once.
type Session struct {
	// Map is the storage map built on the session's etcd.
	Map *Map
	// Embedded is the etcd the map was built on when no --etcd-servers was
	// given: an ephemeral one, or the sandbox's on Config.DataDir. Nil
	// otherwise.
	Embedded *embedded.Etcd
	// Snapshot is the snapshot the map reads, nil on a live etcd.
	Snapshot *snapshot.Snapshot

	getter    *restoptions.Getter
	transport storagebackend.TransportConfig
	timeout   time.Duration

	// clusterIPs readies the service store's cluster IP allocator.
	clusterIPs *clusterips.Allocator
	// loopback is the server's loopback client, served by the map.
	loopback *loopback
	// models are the OpenAPI models of the built-in groups' field
	// managers, built for the first write.
	models *served.Models
	// schemalessCRDs makes a CRD store that reads CRDs without their
	// schemas, which establishing CRDs reads through (EstablishCRDs).
	schemalessCRDs func() (*customresourcedefinition.REST, error)

	mu      sync.Mutex
	clients map[string]*clientv3.Client // by server list
	closers []func()
	// closeErr is what closing failed to undo (the process's feature
	// gates), for Close to return.
	closeErr error
}

// Close releases the stores' etcd clients and the embedded etcd, if any.
func (s *Session) Close() error {
	s.mu.Lock()
	closers := s.closers
	s.closers, s.clients = nil, nil
	s.mu.Unlock()
	for i := len(closers) - 1; i >= 0; i-- {
		closers[i]()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.closeErr
	s.closeErr = nil
	return err
}

func (s *Session) onClose(fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closers = append(s.closers, fn)
}

// Client is a plain etcd client on the etcd the map was built on
// (--etcd-servers), for reads of the whole keyspace. It is dialed on first
// use. Reads of one resource take its handle's, which follows overrides.
func (s *Session) Client(ctx context.Context) (*clientv3.Client, error) {
	return s.clientOn(ctx, s.transport)
}

// clientOn returns the one client regctl keeps per set of servers, dialing
// and checking it on first use.
func (s *Session) clientOn(ctx context.Context, tc storagebackend.TransportConfig) (*clientv3.Client, error) {
	key := strings.Join(tc.ServerList, ",")
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.clients[key]; ok {
		return c, nil
	}
	c, err := etcdview.Connect(ctx, tc, s.timeout)
	if err != nil {
		return nil, err
	}
	if s.clients == nil {
		s.clients = map[string]*clientv3.Client{}
	}
	s.clients[key] = c
	s.closers = append(s.closers, func() { c.Close() })
	return c, nil
}

// EstablishCRDs does for the CRDs named what a server's apiextensions
// controllers do for a CRD that was created or changed (see
// extensions.Establish), where none runs: a sandbox.
func (s *Session) EstablishCRDs(ctx context.Context, names []string) error {
	if len(names) == 0 {
		return nil
	}
	store, err := s.schemalessCRDs()
	if err != nil {
		return err
	}
	defer store.Destroy()
	return extensions.Establish(ctx, names, s.loopback.config(), store, s.timeout)
}

// startEmbedded starts the etcd of a map built without --etcd-servers: the
// sandbox's on cfg.DataDir, or an ephemeral one. Another process holding
// the sandbox is waited for as long as a request would be.
func startEmbedded(cfg Config) (*embedded.Etcd, error) {
	if cfg.DataDir != "" {
		e, err := embedded.StartOn(cfg.DataDir, cfg.Timeout, logs.Etcd(), cfg.Writes)
		if err == nil && e.Created && cfg.Note != nil {
			cfg.Note(fmt.Sprintf("made a new sandbox in %s, which did not exist", cfg.DataDir))
		}
		return e, err
	}
	return embedded.Start(logs.Etcd())
}

// holdEmbedded makes e the map's etcd, stopped when the map is closed
// unless Reopen took it away first.
func (s *Session) holdEmbedded(e *embedded.Etcd) {
	s.Embedded = e
	s.onClose(func() {
		s.mu.Lock()
		e := s.Embedded
		s.mu.Unlock()
		if e != nil {
			e.Close()
		}
	})
}

// Reopen builds the map again, with cfg, on the sandbox's etcd that w runs,
// for a command that changed what the map serves: the CRDs it established
// serve their custom resources only in a map built after. w is closed first
// (the process-wide versions it applied put back, its stores stopped) but
// for its etcd, which the new map holds from then on, with the sandbox's
// lock: no other regctl takes the sandbox in between. Whatever happens, the
// caller closes the map returned and no longer uses w.
func (s *Session) Reopen(ctx context.Context, cfg Config) (*Session, error) {
	if !s.Sandbox() {
		return nil, errors.New("only a sandbox's map is built again")
	}
	s.mu.Lock()
	e := s.Embedded
	s.Embedded = nil
	s.mu.Unlock()
	s.Close()
	cfg.embedded = e
	return Open(ctx, cfg)
}

// Beside opens another session, with cfg, on the data s reads: on the
// etcd s runs in this process (a sandbox's, which only one session can
// start), without taking it over; s must then be closed last. A command
// that reads the same data through two maps (a comparison with the CRDs
// of another revision) opens the second this way.
func (s *Session) Beside(ctx context.Context, cfg Config) (*Session, error) {
	if s.Embedded != nil {
		cfg.DataDir, cfg.beside = "", s.Embedded
	}
	return Open(ctx, cfg)
}

// Sandbox tells whether the map was built on a sandbox (Config.DataDir):
// an etcd of regctl's own, on which no apiserver runs its controllers.
func (s *Session) Sandbox() bool {
	return s.Embedded != nil && s.Embedded.Persistent()
}

// destroy releases every store of the map, those built for serving
// custom resources too.
func (s *Session) destroy() {
	for _, v := range s.Map.versions {
		for _, s := range v.Stores {
			s.Destroy()
		}
	}
	s.Map.mu.Lock()
	defer s.Map.mu.Unlock()
	for _, h := range s.Map.served {
		if h.Route.Subresource == "" {
			h.Storage.Destroy()
		}
	}
}
