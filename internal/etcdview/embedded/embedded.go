// Package embedded runs etcd inside regctl: an ephemeral one for a
// command that names none, and the sandbox on a data directory
// (`--data-dir`), each the real etcd server on loopback ports.
package embedded

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"sync"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.uber.org/zap"
)

// Etcd is a single-member etcd running inside this process on loopback:
// an ephemeral one (Start), whose temporary directory Close
// removes, or one on a data directory that outlives it (StartOn).
type Etcd struct {
	etcd *embed.Etcd
	dir  string
	// ClientURL is the address clients dial, e.g. http://127.0.0.1:41234.
	ClientURL string
	// lock holds the data directory of StartOn for this process; nil for
	// an ephemeral etcd, whose directory is removed on Close.
	lock *os.File
	// Created says that StartOn made the data directory: a new sandbox.
	Created bool
}

// etcd preallocates its write-ahead log a segment ahead, 64 MB a segment:
// 128 MB of disk for an etcd that holds a few keys, and one that does not
// start on a disk with less free. regctl's etcds are a sandbox or thrown
// away, written a command at a time; smaller segments are only cut more
// often.
func init() { wal.SegmentSizeBytes = 8 << 20 }

// readyWithin bounds an embedded etcd's start.
const readyWithin = 30 * time.Second

// Option changes how an ephemeral etcd is configured.
type Option func(*embed.Config)

// WithQuota gives an ephemeral etcd a backend quota of bytes
// (--quota-backend-bytes): the size its database may reach before etcd
// raises its NOSPACE alarm and refuses writes.
func WithQuota(bytes int64) Option {
	return func(cfg *embed.Config) { cfg.QuotaBackendBytes = bytes }
}

// Start starts an ephemeral etcd on free loopback ports. It is meant to
// be thrown away: fsync is off and the data directory is removed on Close.
// logger may be nil to keep etcd silent.
func Start(logger *zap.Logger, opts ...Option) (*Etcd, error) {
	var lastErr error
	// Free ports are found by listening and closing, so another process may
	// take one in between; a couple of retries make that race harmless.
	for attempt := 0; attempt < 3; attempt++ {
		e, err := startEmbeddedOnce(logger, opts)
		if err == nil {
			return e, nil
		}
		lastErr = err
		if errors.As(err, new(gaveUpError)) {
			break
		}
	}
	return nil, fmt.Errorf("starting embedded etcd in %s: %w", os.TempDir(), lastErr)
}

func startEmbeddedOnce(logger *zap.Logger, opts []Option) (*Etcd, error) {
	dir, err := os.MkdirTemp("", "regctl-etcd-")
	if err != nil {
		return nil, err
	}
	e, err := startRecording(dir, nil, logger, func(cfg *embed.Config) {
		cfg.UnsafeNoFsync = true
		for _, o := range opts {
			o(cfg)
		}
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	live.Store(dir, true)
	return e, nil
}

// newConfig is the configuration of a lone member on dir, on free loopback
// ports, which elects itself quickly. logger may be nil to keep etcd
// silent.
func newConfig(dir string, logger *zap.Logger) (*embed.Config, error) {
	if logger == nil {
		logger = zap.NewNop()
	}
	ports, err := freeLoopbackPorts(2)
	if err != nil {
		return nil, err
	}
	clientURL := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))}
	peerURL := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))}

	cfg := embed.NewConfig()
	cfg.Name = "regctl"
	cfg.Dir = dir
	// A lone member elects itself after one election timeout; keep it short.
	cfg.TickMs = 10
	cfg.ElectionMs = 100
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(logger)
	cfg.LogLevel = "error"
	cfg.MaxTxnOps = 1024
	return cfg, nil
}

// start starts etcd with cfg and waits until it serves, or until it gave
// up (see lastFailure). lock is the data directory's lock, kept by the
// result. etcd starts in a goroutine of its own, which it may end.
func start(cfg *embed.Config, lock *os.File, gaveUp <-chan struct{}) (*Etcd, error) {
	type started struct {
		etcd *embed.Etcd
		err  error
	}
	done := make(chan started, 1)
	go func() {
		e, err := embed.StartEtcd(cfg)
		done <- started{e, err}
	}()
	timeout := time.After(readyWithin)
	var e *embed.Etcd
	select {
	case r := <-done:
		if r.err != nil {
			return nil, r.err
		}
		e = r.etcd
	case <-gaveUp:
		return nil, errGaveUp
	case <-timeout:
		return nil, fmt.Errorf("embedded etcd did not start within %s", readyWithin)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, err
	case <-gaveUp:
		// Not closed: a server whose goroutine ended may never stop.
		return nil, errGaveUp
	case <-timeout:
		e.Close()
		return nil, fmt.Errorf("embedded etcd did not become ready within %s", readyWithin)
	}
	return &Etcd{etcd: e, dir: cfg.Dir, ClientURL: cfg.AdvertiseClientUrls[0].String(), lock: lock}, nil
}

// live holds the data directories of the ephemeral etcds still running.
var live sync.Map

// RemoveData removes the data of every ephemeral etcd still
// running, for a process about to exit without closing them (Ctrl-C). The
// data directories of StartOn stay.
func RemoveData() {
	live.Range(func(dir, _ any) bool {
		os.RemoveAll(dir.(string))
		return true
	})
}

// Close stops etcd, and removes its data directory when it is ephemeral or
// releases it when it is not.
func (e *Etcd) Close() error {
	e.etcd.Close()
	if e.lock != nil {
		return e.lock.Close()
	}
	live.Delete(e.dir)
	return os.RemoveAll(e.dir)
}

// Persistent tells an etcd on a data directory of the user's (StartOn) from
// an ephemeral one.
func (e *Etcd) Persistent() bool { return e.lock != nil }

func freeLoopbackPorts(n int) ([]int, error) {
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free loopback port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
