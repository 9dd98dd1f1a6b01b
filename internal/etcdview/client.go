// Package etcdview holds everything in regctl that talks to etcd directly:
// clients and TLS, keys and raw values, revisions, history and status. The
// etcds regctl runs inside itself are etcdview/embedded's, snapshot files
// served as an etcd etcdview/snapshot's.
package etcdview

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/connectivity"
	"k8s.io/apiserver/pkg/storage/storagebackend"
)

// probeGrace is how long a healthy etcd gets to answer before regctl starts
// probing each endpoint to learn why it does not: a healthy one answers in
// a few milliseconds, and then no probe is made at all.
const probeGrace = 50 * time.Millisecond

// Connect dials the etcd described by the apiserver's transport settings
// (--etcd-servers, --etcd-cafile, --etcd-certfile, --etcd-keyfile) and checks
// that one of its endpoints answers a read that changes nothing. Any healthy
// endpoint will do, as for the apiserver's own client. When none answers,
// the error says why for each (refused, a TLS failure, no answer), at once
// when every endpoint has failed for a reason, and otherwise when timeout
// runs out (0: never).
//
// Every read made through the returned client is bounded by timeout on its
// own, so that a long walk of many pages is never cut by a deadline meant
// for one request.
func Connect(ctx context.Context, tc storagebackend.TransportConfig, timeout time.Duration) (*clientv3.Client, error) {
	if len(tc.ServerList) == 0 {
		return nil, errors.New("no etcd given: set `--etcd-servers`")
	}
	tlsCfg, err := clientTLS(tc)
	if err != nil {
		return nil, err
	}
	client, err := clientv3.New(clientv3.Config{
		Endpoints: tc.ServerList,
		TLS:       tlsCfg,
		Logger:    zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("connecting to etcd at %s: %w", strings.Join(tc.ServerList, ","), err)
	}
	if err := checkHealth(ctx, client, tc.ServerList, tlsCfg, timeout); err != nil {
		client.Close()
		return nil, err
	}
	client.KV = boundedKV{KV: client.KV, timeout: timeout}
	client.Lease = boundedLease{Lease: client.Lease, timeout: timeout}
	return client, nil
}

// clientTLS is the TLS configuration the apiserver's etcd client uses for the
// same flags; nil when none of them is set.
func clientTLS(tc storagebackend.TransportConfig) (*tls.Config, error) {
	if tc.CertFile == "" && tc.KeyFile == "" && tc.TrustedCAFile == "" {
		return nil, nil
	}
	info := transport.TLSInfo{CertFile: tc.CertFile, KeyFile: tc.KeyFile, TrustedCAFile: tc.TrustedCAFile}
	cfg, err := info.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading etcd TLS files: %w", err)
	}
	return cfg, nil
}

// checkHealth waits for a count-only read through the client's balancer,
// while probing each endpoint for a reason it cannot be used.
func checkHealth(ctx context.Context, c *clientv3.Client, endpoints []string, tlsCfg *tls.Config, timeout time.Duration) error {
	ctx, cancel := WithRequestTimeout(ctx, timeout)
	defer cancel()
	answered := make(chan error, 1)
	go func() {
		// A member without a leader answers at once that it has none,
		// where a plain read waits for one until the timeout.
		_, err := c.Get(clientv3.WithRequireLeader(ctx), "\x00", clientv3.WithCountOnly())
		answered <- err
	}()
	probed := make(chan probeResult, len(endpoints))
	grace := time.NewTimer(probeGrace)
	defer grace.Stop()
	failures := map[string]error{}
	for {
		select {
		case err := <-answered:
			if err == nil {
				return nil
			}
			return unhealthy(ctx, endpoints, failures, timeout, err)
		case <-grace.C:
			for _, ep := range endpoints {
				go func() {
					err := probeEndpoint(ctx, ep, tlsCfg)
					if err == nil {
						err = leaderless(ctx, c, ep)
					}
					probed <- probeResult{ep, err}
				}()
			}
		case p := <-probed:
			if p.err == nil {
				continue
			}
			failures[p.endpoint] = p.err
			if len(failures) == len(endpoints) {
				return unhealthy(ctx, endpoints, failures, timeout, nil)
			}
		}
	}
}

type probeResult struct {
	endpoint string
	err      error
}

// unhealthy says, in one line, why no endpoint could be used.
func unhealthy(ctx context.Context, endpoints []string, failures map[string]error, timeout time.Duration, err error) error {
	var reasons []string
	for _, ep := range endpoints {
		if f, ok := failures[ep]; ok {
			reasons = append(reasons, fmt.Sprintf("%s: %v", ep, f))
		}
	}
	servers := strings.Join(endpoints, ",")
	if len(failures) == len(endpoints) && every(failures, func(err error) bool { return errors.Is(err, rpctypes.ErrNoLeader) }) {
		err = rpctypes.ErrNoLeader
	}
	switch {
	case notEtcd(err) != "":
		return fmt.Errorf("etcd at %s: the server answers, but is no etcd (%s): %s", servers, notEtcd(err), checkServers)
	case errors.Is(err, rpctypes.ErrNoLeader):
		return fmt.Errorf("etcd at %s answered but has no leader (%v): a majority of its cluster's members is down or cut off; check the other members", servers, err)
	case len(reasons) == len(endpoints) && len(endpoints) == 1:
		return fmt.Errorf("etcd at %s", reasons[0])
	case len(reasons) == len(endpoints):
		return fmt.Errorf("no etcd endpoint can be used: %s", strings.Join(reasons, "; "))
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), errRequestTimeout):
		msg := fmt.Sprintf("etcd at %s did not answer within %s: check `--etcd-servers` and the TLS flags", servers, timeout)
		if len(reasons) > 0 {
			msg += " (" + strings.Join(reasons, "; ") + ")"
		}
		return errors.New(msg)
	case ctx.Err() != nil:
		return context.Cause(ctx)
	}
	return fmt.Errorf("reading from etcd at %s: %w", servers, err)
}

// checkServers is what to do about an endpoint that is no etcd.
const checkServers = "check `--etcd-servers` (etcd's client port is 2379 on a kubeadm control plane; 6443 is kube-apiserver's)"

// httpStatus is the HTTP status grpc reports of a server that answered a
// call with something else than gRPC.
var httpStatus = regexp.MustCompile(`unexpected HTTP status code received from server: (\d+) \(([^)]*)\)`)

// notEtcd says what answered a call when it was an HTTP/2 server but no
// gRPC one (kube-apiserver's port, an HTTPS proxy): "HTTP 401
// Unauthorized". Empty when err is no such answer.
func notEtcd(err error) string {
	if err == nil {
		return ""
	}
	if m := httpStatus.FindStringSubmatch(err.Error()); m != nil {
		return "HTTP " + m[1] + " " + m[2]
	}
	if strings.Contains(err.Error(), "transport: received unexpected content-type") {
		return "it answers without gRPC"
	}
	return ""
}

// leaderless asks the member at endpoint for its status, which it answers
// with or without a leader: ErrNoLeader when it has none. A read that
// requires a leader is refused by such a member, and the client retries
// it for seconds.
func leaderless(ctx context.Context, c *clientv3.Client, endpoint string) error {
	status, err := c.Status(ctx, endpoint)
	if err == nil && status.Leader == 0 {
		return rpctypes.ErrNoLeader
	}
	return nil
}

// every tells whether ok holds of every error of failures.
func every(failures map[string]error, ok func(error) bool) bool {
	for _, err := range failures {
		if !ok(err) {
			return false
		}
	}
	return true
}

// errRequestTimeout is the cause of a context that ran out of
// `--request-timeout`, told apart from the user's Ctrl-C.
var errRequestTimeout = errors.New("request timeout")

// WithRequestTimeout bounds ctx by timeout; 0 means no bound, as in kubectl.
func WithRequestTimeout(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, timeout, errRequestTimeout)
}

// RequestError names the request timeout when it is what ended a request.
func RequestError(ctx context.Context, timeout time.Duration, err error) error {
	if err != nil && errors.Is(context.Cause(ctx), errRequestTimeout) {
		return fmt.Errorf("etcd did not answer within %s (`--request-timeout`): %w", timeout, err)
	}
	return err
}

// boundedKV bounds each request to etcd by the request timeout.
type boundedKV struct {
	clientv3.KV
	timeout time.Duration
}

func (b boundedKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	ctx, cancel := WithRequestTimeout(ctx, b.timeout)
	defer cancel()
	resp, err := b.KV.Get(ctx, key, opts...)
	return resp, RequestError(ctx, b.timeout, err)
}

func (b boundedKV) Do(ctx context.Context, op clientv3.Op) (clientv3.OpResponse, error) {
	ctx, cancel := WithRequestTimeout(ctx, b.timeout)
	defer cancel()
	resp, err := b.KV.Do(ctx, op)
	return resp, RequestError(ctx, b.timeout, err)
}

// requestTimeout is the bound Connect put on each request of c; 0 for a
// client it did not make.
func requestTimeout(c *clientv3.Client) time.Duration {
	if b, ok := c.KV.(boundedKV); ok {
		return b.timeout
	}
	return 0
}

// boundedLease bounds the lease reads regctl makes by the request timeout.
type boundedLease struct {
	clientv3.Lease
	timeout time.Duration
}

func (b boundedLease) TimeToLive(ctx context.Context, id clientv3.LeaseID, opts ...clientv3.LeaseOption) (*clientv3.LeaseTimeToLiveResponse, error) {
	ctx, cancel := WithRequestTimeout(ctx, b.timeout)
	defer cancel()
	resp, err := b.Lease.TimeToLive(ctx, id, opts...)
	return resp, RequestError(ctx, b.timeout, err)
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

// OnLost calls lost once each time the client's connection to etcd fails
// (etcd stopped, the network cut), until ctx ends; the client keeps trying
// to reconnect meanwhile, as a watch through it does. It sends nothing to
// etcd: it follows the connection's state, asking it to reconnect when it
// goes idle so that a lost etcd is noticed.
func OnLost(ctx context.Context, c *clientv3.Client, lost func()) {
	conn := c.ActiveConnection()
	if conn == nil {
		return
	}
	reported := false
	for {
		state := conn.GetState()
		switch state {
		case connectivity.Idle:
			conn.Connect()
		case connectivity.Ready:
			reported = false
		case connectivity.TransientFailure:
			if !reported {
				reported = true
				lost()
			}
		case connectivity.Shutdown:
			return
		}
		if !conn.WaitForStateChange(ctx, state) {
			return
		}
	}
}
