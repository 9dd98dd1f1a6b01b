// Package etcdview holds everything in regctl that talks to etcd directly:
// clients and TLS, the embedded etcd, and (later) keys and raw values.
package etcdview

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"k8s.io/apiserver/pkg/storage/storagebackend"
)

// Connect dials the etcd described by the apiserver's transport settings
// (--etcd-servers, --etcd-cafile, --etcd-certfile, --etcd-keyfile) and checks
// that it answers, all within timeout. The check is a Status call: it reads
// member state and never changes the revision.
func Connect(ctx context.Context, tc storagebackend.TransportConfig, timeout time.Duration) (*clientv3.Client, error) {
	servers := strings.Join(tc.ServerList, ",")
	if len(tc.ServerList) == 0 {
		return nil, errors.New("no etcd given: set `--etcd-servers`")
	}
	var tlsInfo transport.TLSInfo
	tlsInfo.CertFile, tlsInfo.KeyFile, tlsInfo.TrustedCAFile = tc.CertFile, tc.KeyFile, tc.TrustedCAFile
	cfg := clientv3.Config{
		Endpoints:   tc.ServerList,
		DialTimeout: timeout,
		DialOptions: []grpc.DialOption{grpc.WithBlock()},
		Logger:      zap.NewNop(),
	}
	if tc.CertFile != "" || tc.KeyFile != "" || tc.TrustedCAFile != "" {
		tlsCfg, err := tlsInfo.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("loading etcd TLS files: %w", err)
		}
		cfg.TLS = tlsCfg
	}
	client, err := clientv3.New(cfg)
	if err != nil {
		return nil, unreachable(servers, timeout, err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := client.Status(ctx, tc.ServerList[0]); err != nil {
		client.Close()
		return nil, unreachable(servers, timeout, err)
	}
	return client, nil
}

func unreachable(servers string, timeout time.Duration, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("etcd at %s did not answer within %s: check `--etcd-servers` and the TLS flags", servers, timeout)
	}
	return fmt.Errorf("connecting to etcd at %s: %w", servers, err)
}

// Revision returns the current revision of the etcd keyspace, read with a
// count-only range so that nothing is written.
func Revision(ctx context.Context, c *clientv3.Client) (int64, error) {
	resp, err := c.Get(ctx, "\x00", clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("reading etcd revision: %w", err)
	}
	return resp.Header.Revision, nil
}
