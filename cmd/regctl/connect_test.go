package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/regctl/regctl/internal/cli"
)

// certs are PEM files of a test PKI.
type certs struct {
	dir string
	n   int
}

func newCerts(t *testing.T) *certs { return &certs{dir: t.TempDir()} }

// issue makes a key pair signed by parent (self-signed when nil) and writes
// it; it returns the cert and key files and the parsed pair for signing.
func (c *certs) issue(t *testing.T, parent *issued, cn string, server bool) *issued {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	c.n++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(int64(c.n)),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
	}
	switch {
	case parent == nil:
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	case server:
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		tmpl.DNSNames = []string{"localhost"}
	default:
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	out := &issued{cert: cert, key: key, certFile: filepath.Join(c.dir, cn+".crt"), keyFile: filepath.Join(c.dir, cn+".key")}
	write := func(path, typ string, b []byte) {
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(out.certFile, "CERTIFICATE", der)
	write(out.keyFile, "EC PRIVATE KEY", keyDER)
	return out
}

type issued struct {
	cert              *x509.Certificate
	key               *ecdsa.PrivateKey
	certFile, keyFile string
}

// tlsEtcd is a real embedded etcd that serves clients over TLS and asks for
// a client certificate signed by its CA.
type tlsEtcd struct {
	url, port      string
	ca, client     *issued
	otherCA, other *issued // a CA the server does not trust, and a client cert it signed
}

func newTLSEtcd(t *testing.T) *tlsEtcd {
	t.Helper()
	c := newCerts(t)
	ca := c.issue(t, nil, "ca", false)
	server := c.issue(t, ca, "server", true)
	otherCA := c.issue(t, nil, "other-ca", false)
	s := &tlsEtcd{ca: ca, client: c.issue(t, ca, "client", false), otherCA: otherCA, other: c.issue(t, otherCA, "other-client", false)}
	ports := freePorts(t, 2)
	clientURL := url.URL{Scheme: "https", Host: "127.0.0.1:" + ports[0]}
	peerURL := url.URL{Scheme: "http", Host: "127.0.0.1:" + ports[1]}
	cfg := embed.NewConfig()
	cfg.Name = "tls"
	cfg.Dir = t.TempDir()
	cfg.UnsafeNoFsync = true
	cfg.TickMs, cfg.ElectionMs = 10, 100
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{clientURL}, []url.URL{clientURL}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peerURL}, []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.ClientTLSInfo = transport.TLSInfo{CertFile: server.certFile, KeyFile: server.keyFile, TrustedCAFile: ca.certFile, ClientCertAuth: true}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		t.Fatal("TLS etcd did not start")
	}
	s.url, s.port = clientURL.String(), ports[0]
	return s
}

func freePorts(t *testing.T, n int) []string {
	t.Helper()
	var ports []string
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	return ports
}

// closedPort is a loopback address nothing listens on: connections to it
// are refused.
func closedPort(t *testing.T) string {
	return "http://127.0.0.1:" + freePorts(t, 1)[0]
}

// blackhole is a loopback address that accepts connections and never says
// a word on them, as a host that is up but whose etcd hangs.
func blackhole(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + l.Addr().String()
}

// runWithin runs the CLI and fails the test if it has not returned within
// limit: for commands that must not wait for their (long) request timeout.
func runWithin(t *testing.T, limit time.Duration, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { done <- Run(ctx, cli.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut}, args) }()
	select {
	case code = <-done:
		return out.String(), errOut.String(), code
	case <-time.After(limit):
		cancel()
		<-done
		t.Fatalf("%v: still running after %s; stderr %q", args, limit, errOut.String())
		return "", "", 0
	}
}

func TestConnectionErrorsNameTheirCause(t *testing.T) {
	t.Parallel()
	s := newTLSEtcd(t)
	https := "--etcd-servers=" + s.url
	ca, cert, key := "--etcd-cafile="+s.ca.certFile, "--etcd-certfile="+s.client.certFile, "--etcd-keyfile="+s.client.keyFile
	for _, tc := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"wrong CA", []string{https, "--etcd-cafile=" + s.otherCA.certFile, cert, key}, "x509: certificate signed by unknown authority"},
		{"client certificate from another CA", []string{https, ca, "--etcd-certfile=" + s.other.certFile, "--etcd-keyfile=" + s.other.keyFile}, "the server does not accept the client certificate"},
		{"no client certificate", []string{https, ca}, "certificate required"},
		{"http to an https port", []string{"--etcd-servers=http://127.0.0.1:" + s.port}, "the server speaks TLS"},
		{"refused", []string{"--etcd-servers=" + closedPort(t)}, "connection refused"},
		{"every endpoint refused", []string{"--etcd-servers=" + closedPort(t) + "," + closedPort(t)}, "no etcd endpoint can be used"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A long request timeout: each cause must be told at once.
			_, stderr, code := runWithin(t, 20*time.Second, append([]string{"get", "pods", "--request-timeout=5m"}, tc.flags...)...)
			if code == 0 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q: want one line containing %q", code, stderr, tc.want)
			}
		})
	}
	// Servers that answer, but are no etcd: an HTTP/1 server, and one
	// that answers HTTP/2 as kube-apiserver answers a stranger.
	h1 := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(h1.Close)
	apiserverLike := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`))
	}))
	apiserverLike.EnableHTTP2 = true
	apiserverLike.StartTLS()
	t.Cleanup(apiserverLike.Close)
	itsCA := writeFile(t, "ca.crt", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: apiserverLike.Certificate().Raw})))
	for name, flags := range map[string][]string{
		"an HTTP/1 server":        {"--etcd-servers=" + h1.URL},
		"an apiserver-like HTTPS": {"--etcd-servers=" + apiserverLike.URL, "--etcd-cafile=" + itsCA},
	} {
		t.Run(name, func(t *testing.T) {
			_, stderr, code := runWithin(t, 20*time.Second, append([]string{"get", "pods", "--request-timeout=5m"}, flags...)...)
			if code == 0 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "the server answers, but is no etcd (") ||
				strings.Contains(stderr, "rpc error") || strings.Contains(stderr, "Failure") {
				t.Errorf("exit %d, stderr %q: want one line saying it is no etcd", code, stderr)
			}
		})
	}
	t.Run("https to a plain etcd", func(t *testing.T) {
		plain := newLiveEtcd(t)
		url := "--etcd-servers=" + strings.Replace(strings.TrimPrefix(plain.flag(), "--etcd-servers="), "http://", "https://", 1)
		_, stderr, code := runWithin(t, 20*time.Second, "get", "pods", "--request-timeout=5m", url)
		if code == 0 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "the server does not speak TLS: use an http:// endpoint") {
			t.Errorf("exit %d, stderr %q: want one line saying the server does not speak TLS", code, stderr)
		}
	})
	t.Run("right certificates", func(t *testing.T) {
		_, stderr, code := runWithin(t, 20*time.Second, "get", "pods", https, ca, cert, key)
		if code != 0 || !strings.Contains(stderr, "No resources found") {
			t.Errorf("exit %d, stderr %q: want an empty list", code, stderr)
		}
	})
}

func TestAnyHealthyEndpointWillDo(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	s.createPods(t, "default", 2, nil)
	for name, first := range map[string]string{"refused": closedPort(t), "silent": blackhole(t)} {
		t.Run(name, func(t *testing.T) {
			servers := "--etcd-servers=" + first + "," + s.url
			for _, args := range [][]string{{"get", "pods", "-o", "name"}, {"keys", "pods"}, {"inspect", "pods/pod-00001"}} {
				stdout, stderr, code := runWithin(t, 20*time.Second, append(args, servers, "--request-timeout=5m")...)
				if code != 0 || !strings.Contains(stdout, "pod-00001") {
					t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
				}
			}
		})
	}
}

// slowWriter is a consumer that takes its time with every write.
type slowWriter struct {
	bytes.Buffer
	delay time.Duration
}

func (w *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(w.delay)
	return w.Buffer.Write(p)
}

func TestRequestTimeoutBoundsEachRequestNotTheCommand(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	s.createPods(t, "default", 40, nil)
	for _, timeout := range []string{"1s", "0"} {
		// 40 slow writes take 2s: longer than the timeout, but no request does.
		out := &slowWriter{delay: 50 * time.Millisecond}
		var errOut bytes.Buffer
		code := Run(context.Background(), cli.IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: &errOut},
			[]string{"get", "pods", "-o", "name", "--chunk-size=5", "--request-timeout=" + timeout, s.flag()})
		if code != 0 || strings.Count(out.String(), "\n") != 40 {
			t.Errorf("--request-timeout=%s: exit %d, %d pods, stderr %q: want all 40", timeout, code, strings.Count(out.String(), "\n"), errOut.String())
		}
	}
}

// startEtcdCluster starts an etcd cluster of n members in this process,
// each on free loopback ports, and returns them, ready, with their client
// URLs. The caller closes them.
func startEtcdCluster(t *testing.T, n int) ([]*embed.Etcd, []string) {
	t.Helper()
	ports := freePorts(t, 2*n)
	cfgs := make([]*embed.Config, n)
	var initial, urls []string
	for i := range cfgs {
		cfg := embed.NewConfig()
		cfg.Name = fmt.Sprintf("m%d", i)
		cfg.Dir = t.TempDir()
		cfg.TickMs, cfg.ElectionMs = 10, 100
		cfg.UnsafeNoFsync = true
		client := url.URL{Scheme: "http", Host: "127.0.0.1:" + ports[2*i]}
		peer := url.URL{Scheme: "http", Host: "127.0.0.1:" + ports[2*i+1]}
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
		cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
		cfg.LogLevel = "error"
		initial = append(initial, cfg.Name+"="+peer.String())
		urls = append(urls, client.String())
		cfgs[i] = cfg
	}
	started := make([]*embed.Etcd, n)
	errs := make(chan error, n)
	for i, cfg := range cfgs {
		cfg.InitialCluster = strings.Join(initial, ",")
		go func() {
			e, err := embed.StartEtcd(cfg)
			started[i] = e
			errs <- err
		}()
	}
	for range cfgs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range started {
		select {
		case <-e.Server.ReadyNotify():
		case <-time.After(30 * time.Second):
			t.Fatalf("the %d-member etcd did not become ready", n)
		}
	}
	return started, urls
}

// memberWithoutQuorum is the client URL of a member of a two-member etcd
// cluster whose other member has stopped: it answers, but has no leader.
func memberWithoutQuorum(t *testing.T) string {
	t.Helper()
	started, urls := startEtcdCluster(t, 2)
	t.Cleanup(started[0].Close)
	started[1].Close()
	// Until its election timeout passes, the member left may still be the
	// leader, and a read waits on a quorum it no longer has: wait until it
	// knows it has no leader, the state the test is about.
	deadline := time.Now().Add(30 * time.Second)
	for started[0].Server.Leader() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the member left alone still has a leader")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return urls[0]
}

func TestAMemberWithoutQuorumSaysSo(t *testing.T) {
	t.Parallel()
	endpoint := memberWithoutQuorum(t)
	start := time.Now()
	_, stderr, code := runWithin(t, 20*time.Second, "get", "pods", "--request-timeout=5s", "--etcd-servers="+endpoint)
	if code == 0 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "etcd at "+endpoint+" answered but has no leader (etcdserver: no leader)") {
		t.Errorf("exit %d, stderr %q: want one line saying the member has no leader", code, stderr)
	}
	if took := time.Since(start); took > 6*time.Second {
		t.Errorf("took %s, longer than the request timeout", took)
	}
}
