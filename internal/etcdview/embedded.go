package etcdview

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
	"go.uber.org/zap"
)

// Embedded is a single-member etcd running inside this process on loopback,
// with its data in a temporary directory that Close removes.
type Embedded struct {
	etcd *embed.Etcd
	dir  string
	// ClientURL is the address clients dial, e.g. http://127.0.0.1:41234.
	ClientURL string
}

// StartEmbedded starts an ephemeral etcd on free loopback ports. It is meant to
// be thrown away: fsync is off and the data directory is removed on Close.
// logger may be nil to keep etcd silent.
func StartEmbedded(logger *zap.Logger) (*Embedded, error) {
	if logger == nil {
		logger = zap.NewNop()
	}
	var lastErr error
	// Free ports are found by listening and closing, so another process may
	// take one in between; a couple of retries make that race harmless.
	for attempt := 0; attempt < 3; attempt++ {
		e, err := startEmbeddedOnce(logger)
		if err == nil {
			return e, nil
		}
		lastErr = err
	}
	return nil, fmt.Errorf("starting embedded etcd: %w", lastErr)
}

func startEmbeddedOnce(logger *zap.Logger) (*Embedded, error) {
	dir, err := os.MkdirTemp("", "regctl-etcd-")
	if err != nil {
		return nil, err
	}
	ports, err := freeLoopbackPorts(2)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	clientURL := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))}
	peerURL := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))}

	cfg := embed.NewConfig()
	cfg.Name = "regctl"
	cfg.Dir = dir
	cfg.UnsafeNoFsync = true
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

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		os.RemoveAll(dir)
		return nil, err
	case <-time.After(30 * time.Second):
		e.Close()
		os.RemoveAll(dir)
		return nil, errors.New("embedded etcd did not become ready within 30s")
	}
	live.Store(dir, true)
	return &Embedded{etcd: e, dir: dir, ClientURL: clientURL.String()}, nil
}

// live holds the data directories of the embedded etcds still running.
var live sync.Map

// RemoveEmbeddedData removes the data of every embedded etcd still running,
// for a process about to exit without closing them (Ctrl-C).
func RemoveEmbeddedData() {
	live.Range(func(dir, _ any) bool {
		os.RemoveAll(dir.(string))
		return true
	})
}

// Close stops etcd and removes its data directory.
func (e *Embedded) Close() error {
	e.etcd.Close()
	live.Delete(e.dir)
	return os.RemoveAll(e.dir)
}

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
