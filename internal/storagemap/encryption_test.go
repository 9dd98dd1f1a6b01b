package storagemap

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/regctl/regctl/internal/storagemap/serverflags"
	kmsv2mock "k8s.io/apiserver/pkg/storage/value/encrypt/envelope/testing/v2"
)

// kmsGoroutines are the stacks of the goroutines the server's KMS v2 code
// runs: its probes and the closer of each plugin connection.
func kmsGoroutines() []string {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "/encryptionconfig.") || strings.Contains(g, "/envelope/kmsv2.") {
			out = append(out, g)
		}
	}
	return out
}

// kmsv2Config writes a config in dir whose secrets the KMS v2 plugin on
// socket encrypts; the plugin's timeout is longer than any test waits.
func kmsv2Config(t *testing.T, dir, socket string) string {
	t.Helper()
	path := filepath.Join(dir, "encryption.yaml")
	if err := os.WriteFile(path, []byte(`apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
  - kms: {apiVersion: v2, name: testkms, endpoint: unix://`+socket+`, timeout: 5m}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// noKMSGoroutinesLeft fails the test if the server's KMS code still runs
// goroutines a moment after the map was closed or not built.
func noKMSGoroutinesLeft(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for left := kmsGoroutines(); len(left) > 0; left = kmsGoroutines() {
		if time.Now().After(deadline) {
			t.Fatalf("%d KMS goroutines still run:\n%s", len(left), strings.Join(left, "\n\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestKMSv2ProbesEndWithTheMap builds a map whose secrets a KMS v2 plugin
// encrypts: loading the config starts the server's probes, which would
// poll the plugin for as long as the process lives; closing the map ends
// them.
func TestKMSv2ProbesEndWithTheMap(t *testing.T) {
	// A Unix socket's path must be short: not under t.TempDir().
	dir, err := os.MkdirTemp("", "kms")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket := filepath.Join(dir, "kms.sock")
	kmsv2mock.NewBase64Plugin(t, socket)
	opts := serverflags.NewOptions()
	opts.Server.Etcd.EncryptionProviderConfigFilepath = kmsv2Config(t, dir, socket)
	w, err := Open(context.Background(), Config{Options: opts, Timeout: 10 * time.Second, Only: "secrets"})
	if err != nil {
		t.Fatal(err)
	}
	if len(kmsGoroutines()) == 0 {
		w.Close()
		t.Fatal("no KMS v2 probe runs while the map is open: the check below proves nothing")
	}
	for _, r := range w.Map.Table.Routes {
		if r.Path == "secrets" && r.Encryption != "kms:v2:testkms" {
			t.Errorf("secrets are written by %q, want kms:v2:testkms", r.Encryption)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	noKMSGoroutinesLeft(t)
}

// TestKMSv2PluginThatDoesNotAnswer gives a plugin that takes connections
// and never answers: the server waits for it as long as its timeout in the
// config; building the map stops after the request timeout, and what it
// started for the plugin stops with it.
func TestKMSv2PluginThatDoesNotAnswer(t *testing.T) {
	dir, err := os.MkdirTemp("", "kms")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket := filepath.Join(dir, "kms.sock")
	l, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	opts := serverflags.NewOptions()
	opts.Server.Etcd.EncryptionProviderConfigFilepath = kmsv2Config(t, dir, socket)
	_, err = Open(context.Background(), Config{Options: opts, Timeout: 2 * time.Second, Only: "secrets"})
	want := "loading `--encryption-provider-config`: kms provider \"testkms\": plugin unix://" + socket + " did not answer within 2s"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	noKMSGoroutinesLeft(t)
}
