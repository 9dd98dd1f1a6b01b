package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kmsv2mock "k8s.io/apiserver/pkg/storage/value/encrypt/envelope/testing/v2"
)

// socketDir is a directory for a Unix socket, whose path must be short:
// t.TempDir() can be too long.
func socketDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "kms")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// kmsv2Config writes an EncryptionConfiguration in dir: secrets are
// encrypted by the KMS v2 plugin "testkms" on socket, every other resource
// by aesgcm.
func kmsv2Config(t *testing.T, dir, socket, timeout string) string {
	t.Helper()
	path := filepath.Join(dir, "encryption.yaml")
	config := `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
  - kms:
      apiVersion: v2
      name: testkms
      endpoint: unix://` + socket + `
      timeout: ` + timeout + `
  - identity: {}
- resources: ['*.*']
  providers:
  - aesgcm:
      keys:
      - name: gcm1
        secret: MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=
`
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// runBinaryWithin runs the built regctl and fails the test if it is still
// running after limit.
func runBinaryWithin(t *testing.T, limit time.Duration, args ...string) (stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, regctlBinary(t), args...)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%v: still running after %s; stderr %q", args, limit, errOut.String())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return errOut.String(), cmd.ProcessState.ExitCode()
}

// TestKMSv2UnreachablePluginIsOneLine gives configs whose plugin does not
// answer. The plugin's timeout is longer than the test waits: the server
// would wait that long for its first answer, regctl stops within its
// request timeout.
func TestKMSv2UnreachablePluginIsOneLine(t *testing.T) {
	s := newLiveEtcd(t)
	dir := socketDir(t)
	// A socket file left behind by a plugin that exited.
	stale := filepath.Join(dir, "stale.sock")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
	// A plugin that takes connections and never answers.
	hung := filepath.Join(dir, "hung.sock")
	hl, err := net.Listen("unix", hung)
	if err != nil {
		t.Fatal(err)
	}
	defer hl.Close()
	missing := filepath.Join(dir, "missing.sock")
	for _, tc := range []struct {
		name, socket, want string
	}{
		{"no socket", missing, "unreachable: "},
		{"stale socket", stale, "unreachable: "},
		{"no answer", hung, "did not answer within 2s\n"},
	} {
		enc := "--encryption-provider-config=" + kmsv2Config(t, t.TempDir(), tc.socket, "5m")
		want := "error: loading `--encryption-provider-config`: kms provider \"testkms\": plugin unix://" + tc.socket + " " + tc.want
		for _, args := range [][]string{
			{"routes"},
			{"get", "secrets", "-A", s.flag()},
			{"inspect", "secrets/db", "-n", "shop", s.flag()},
		} {
			stderr, code := runBinaryWithin(t, time.Minute, append(args, enc, "--request-timeout=2s")...)
			if code == 0 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, want) {
				t.Errorf("%s, %v: exit %d, stderr %q: want one line starting %q", tc.name, args, code, stderr, want)
			}
		}
	}
}

// TestKMSv2UnhealthyPluginIsOneLine gives a config whose plugin answers but
// is not healthy, as the server's health check finds it.
func TestKMSv2UnhealthyPluginIsOneLine(t *testing.T) {
	dir := socketDir(t)
	socket := filepath.Join(dir, "kms.sock")
	plugin := kmsv2mock.NewBase64Plugin(t, socket)
	plugin.EnterFailedState()
	enc := "--encryption-provider-config=" + kmsv2Config(t, dir, socket, "3s")
	stderr, code := runBinaryWithin(t, time.Minute, "routes", enc)
	want := "error: loading `--encryption-provider-config`: kms provider \"testkms\": plugin unix://" + socket + " not healthy: "
	if code == 0 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, want) || !strings.Contains(stderr, "key disabled") {
		t.Errorf("exit %d, stderr %q: want one line starting %q with the plugin's answer", code, stderr, want)
	}
}
