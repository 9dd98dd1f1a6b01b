package storagemap

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/regctl/regctl/internal/handle"
)

// ErrNoEtcd is what a command that works on data says when none is named:
// it must not dial a default address and hang, nor read the empty etcd
// the map is otherwise built on. Each way to name the data is one item of
// the list.
var ErrNoEtcd = errors.New("no etcd given: name the data to work on with " + strings.Join([]string{
	"`--etcd-servers` (and the TLS flags) or etcdctl's ETCDCTL_ENDPOINTS (and ETCDCTL_CACERT, ETCDCTL_CERT, ETCDCTL_KEY) for an etcd",
	"`--data-dir DIR` for a sandbox, an etcd inside regctl on DIR",
	"`--snapshot FILE` for an etcd snapshot, read-only",
}, ", or ") + "; `regctl routes` works without one")

// EtcdGiven tells whether cfg names data to work on: an etcd, a sandbox or
// a snapshot.
func (cfg Config) EtcdGiven() bool {
	return len(cfg.Options.Server.Etcd.StorageConfig.Transport.ServerList) > 0 || cfg.DataDir != "" || cfg.Snapshot != ""
}

// Writable refuses a write to a snapshot, before anything is read.
func (cfg Config) Writable() error {
	if cfg.Snapshot != "" {
		return fmt.Errorf("%s is an etcd snapshot, which regctl only reads: write to a live etcd (`--etcd-servers`)", cfg.Snapshot)
	}
	return nil
}

// OpenData is Open for a command on data: it refuses to build the map on
// an ephemeral etcd when cfg names none.
func OpenData(ctx context.Context, cfg Config) (*Session, error) {
	if !cfg.EtcdGiven() {
		return nil, ErrNoEtcd
	}
	return Open(ctx, cfg)
}

// OpenAll is OpenData for a command on every stored resource: the session
// and its keyspace, with the client of `--etcd-servers` (dialed while the
// map was built).
func OpenAll(ctx context.Context, cfg Config) (*Session, handle.Keyspace, error) {
	s, err := OpenData(ctx, cfg)
	if err != nil {
		return nil, handle.Keyspace{}, err
	}
	ks, err := s.Keyspace(ctx)
	if err != nil {
		s.Close()
		return nil, handle.Keyspace{}, err
	}
	return s, ks, nil
}

// Keyspace is what a command on every stored resource works through: the
// client of `--etcd-servers`, the etcd prefix and every handle of the map.
func (s *Session) Keyspace(ctx context.Context) (handle.Keyspace, error) {
	main, err := s.Client(ctx)
	if err != nil {
		return handle.Keyspace{}, err
	}
	return handle.Keyspace{Client: main, EtcdPrefix: s.Map.Table.EtcdPrefix, Handles: s.Map.Ordered()}, nil
}
