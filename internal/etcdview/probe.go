package etcdview

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/http2"
)

// probeEndpoint finds out why an etcd endpoint cannot be used, the way the
// etcd client would use it: a TCP connection, then, for a TLS endpoint, a
// handshake with the same TLS configuration. It returns nil when nothing is
// wrong that a probe can see (the endpoint may still be slow or without
// quorum) and for endpoints it does not know how to reach (unix sockets).
// It reads and writes no data of etcd's.
func probeEndpoint(ctx context.Context, endpoint string, tlsCfg *tls.Config) error {
	host, secure, ok := endpointAddress(endpoint, tlsCfg != nil)
	if !ok {
		return nil
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && ctx.Err() == nil {
			return fmt.Errorf("%w: check `--etcd-servers`", op.Err)
		}
		return nil
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if secure {
		// A plain server does not answer a TLS hello: it waits for more
		// of what it takes for HTTP/2. Asked in its own terms, it says so.
		if speaksPlainHTTP2(ctx, host) {
			return errors.New("the server does not speak TLS: use an http:// endpoint")
		}
		return probeTLS(ctx, conn, host, tlsCfg)
	}
	if err := probePlain(ctx, conn); err != nil {
		return err
	}
	if answer := plainHTTP2Answer(ctx, host); answer != "" {
		return fmt.Errorf("the server answers, but is no etcd (%s): %s", answer, checkServers)
	}
	return nil
}

// plainAnswer bounds how long a server has to answer HTTP/2's opening in
// kind: one on the network path answers within a round trip.
const plainAnswer = time.Second

// speaksPlainHTTP2 tells whether the server at host answers HTTP/2's
// client preface, unencrypted, with its SETTINGS frame, as etcd's plain
// gRPC listener does. A TLS server takes the preface for a bad record.
func speaksPlainHTTP2(ctx context.Context, host string) bool {
	return isSettings(prefaceAnswer(ctx, host))
}

// plainHTTP2Answer is what a plain server answers HTTP/2's client preface
// with when it is not the SETTINGS frame etcd answers with: an HTTP/1
// server's status line ("it speaks HTTP/1.1 400 Bad Request"). Empty when
// the server answers as etcd does, or says nothing (a slow server says
// nothing certain).
func plainHTTP2Answer(ctx context.Context, host string) string {
	answer := prefaceAnswer(ctx, host)
	if len(answer) == 0 || isSettings(answer) {
		return ""
	}
	if line, _, _ := strings.Cut(string(answer), "\r\n"); strings.HasPrefix(line, "HTTP/") {
		return "it speaks " + line
	}
	return "it answers without HTTP/2"
}

// prefaceAnswer sends HTTP/2's client preface and an empty SETTINGS frame
// to host, unencrypted, and returns the first bytes of the answer, nil
// when none comes within plainAnswer.
func prefaceAnswer(ctx context.Context, host string) []byte {
	ctx, cancel := context.WithTimeout(ctx, plainAnswer)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	// The preface, then an empty SETTINGS frame (length 0, type 4).
	if _, err := io.WriteString(conn, http2.ClientPreface+"\x00\x00\x00\x04\x00\x00\x00\x00\x00"); err != nil {
		return nil
	}
	var buf [64]byte
	n, _ := io.ReadAtLeast(conn, buf[:], 9)
	return buf[:n]
}

// isSettings tells whether an answer starts with an HTTP/2 SETTINGS frame.
func isSettings(answer []byte) bool {
	return len(answer) >= 9 && answer[3] == byte(http2.FrameSettings)
}

// endpointAddress is the host:port an endpoint names and whether the etcd
// client speaks TLS to it: https always, http never, no scheme when TLS
// files are given.
func endpointAddress(endpoint string, haveTLS bool) (host string, secure, ok bool) {
	if !strings.Contains(endpoint, "://") {
		return endpoint, haveTLS, true
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "", false, false
	}
	switch u.Scheme {
	case "https":
		return u.Host, true, true
	case "http":
		return u.Host, false, true
	}
	return "", false, false
}

// probeTLS makes the handshake the client would. With TLS 1.3 the server
// judges the client's certificate after the client's side of the handshake
// is done, so its verdict arrives as an alert on the first read: one read
// waits for it (a server that accepted the certificate sends nothing until
// spoken to, and the read ends with the probe).
func probeTLS(ctx context.Context, conn net.Conn, host string, base *tls.Config) error {
	cfg := &tls.Config{}
	if base != nil {
		cfg = base.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(host)
	}
	cfg.NextProtos = []string{"h2"}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		return tlsProblem(ctx, err)
	}
	var buf [1]byte
	if _, err := tc.Read(buf[:]); err != nil {
		return tlsProblem(ctx, err)
	}
	return nil
}

// probePlain tells whether a server the client would speak plain HTTP/2 to
// answers a TLS hello: then the endpoint needs https:// and the TLS flags.
func probePlain(ctx context.Context, conn net.Conn) error {
	tc := tls.Client(conn, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
	err := tc.HandshakeContext(ctx)
	var alert tls.AlertError
	if err == nil || errors.As(err, &alert) || strings.Contains(fmt.Sprint(err), "remote error") {
		return errors.New("the server speaks TLS: use an https:// endpoint with `--etcd-cafile` (and `--etcd-certfile`, `--etcd-keyfile` if it asks for a client certificate)")
	}
	return nil
}

// tlsProblem keeps the TLS library's words, which users search for, and
// adds the flag to look at. Errors caused by the probe ending are no
// verdict.
func tlsProblem(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	msg := err.Error()
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	switch {
	case errors.As(err, &unknownAuthority):
		return fmt.Errorf("%s: the server's certificate is not signed by `--etcd-cafile`", msg)
	case errors.As(err, &hostname):
		return fmt.Errorf("%s: the server's certificate is not for this address", msg)
	case strings.Contains(msg, "certificate required"):
		return fmt.Errorf("%s: the server asks for a client certificate: set `--etcd-certfile` and `--etcd-keyfile`", msg)
	case strings.Contains(msg, "bad certificate"), strings.Contains(msg, "unknown certificate authority"), strings.Contains(msg, "certificate unknown"):
		return fmt.Errorf("%s: the server does not accept the client certificate of `--etcd-certfile`", msg)
	case strings.Contains(msg, "first record does not look like a TLS handshake"):
		return fmt.Errorf("%s: the server does not speak TLS: use an http:// endpoint", msg)
	case strings.Contains(msg, "remote error"), strings.Contains(msg, "x509"), strings.Contains(msg, "tls:"):
		return err
	}
	// EOF, reset, timeouts: a server that closed on us says nothing certain.
	return nil
}
