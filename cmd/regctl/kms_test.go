package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kmsv1mock "k8s.io/apiserver/pkg/storage/value/encrypt/envelope/testing/v1beta1"
	kmsv2mock "k8s.io/apiserver/pkg/storage/value/encrypt/envelope/testing/v2"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/scan"
	"github.com/regctl/regctl/test/apiserver"
)

// The KMS v2 plugin of these tests is the apiserver's own mock: it
// "encrypts" with base64 and names its key "1".
const mockKeyID = "1"

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

// TestKMSv2AgreesWithKubeAPIServer runs a real kube-apiserver whose secrets
// a KMS v2 plugin encrypts, and regctl with the same config on its etcd.
func TestKMSv2AgreesWithKubeAPIServer(t *testing.T) {
	dir := socketDir(t)
	socket := filepath.Join(dir, "kms.sock")
	kmsv2mock.NewBase64Plugin(t, socket)
	enc := "--encryption-provider-config=" + kmsv2Config(t, dir, socket, "3s")
	s := apiserver.Start(t, enc)
	etcdFlag := "--etcd-servers=" + s.EtcdURL
	e := &liveEtcd{url: s.EtcdURL, client: etcdClient(t, s.EtcdURL)}
	ctx := context.Background()
	const ns = "regctl-kms"
	if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// storedWithKMS checks that etcd holds key encrypted by the plugin.
	storedWithKMS := func(t *testing.T, key, plain string) {
		t.Helper()
		raw := e.rawValue(t, key)
		if !bytes.HasPrefix(raw, []byte("k8s:enc:kms:v2:testkms:")) || bytes.Contains(raw, []byte(plain)) {
			t.Fatalf("%s holds %q: want a KMS v2 envelope and no plain text", key, raw[:min(len(raw), 40)])
		}
	}

	t.Run("a secret the server wrote is read as the server serves it", func(t *testing.T) {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns}, Data: map[string][]byte{"password": []byte("hunter2")}}
		if _, err := s.Client.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		storedWithKMS(t, "/registry/secrets/"+ns+"/db", "hunter2")
		got := mustRun(t, "get", "secret", "db", "-n", ns, "-o", "json", "--show-managed-fields", etcdFlag, enc)
		raw, err := s.Client.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces/"+ns+"/secrets/db").SetHeader("Accept", "application/json").DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if normalize(t, []byte(got)) != normalize(t, raw) {
			t.Errorf("regctl and the apiserver differ\nregctl:    %s\napiserver: %s", got, raw)
		}
	})

	t.Run("inspect shows the provider and the key ID, in every format", func(t *testing.T) {
		args := []string{"inspect", "secrets/db", "-n", ns, etcdFlag, enc}
		var info etcdview.ValueInfo
		if err := json.Unmarshal([]byte(mustRun(t, append(args, "-o", "json")...)), &info); err != nil {
			t.Fatal(err)
		}
		if info.Encryption != "kms:v2:testkms" || info.KMSKeyID != mockKeyID || info.StoredKind != "Secret" || info.Encoding != "application/vnd.kubernetes.protobuf" || info.Problem != "" {
			t.Errorf("inspect -o json: %+v", info)
		}
		if out := mustRun(t, append(args, "-o", "yaml")...); !strings.Contains(out, "kmsKeyID: \""+mockKeyID+"\"\n") {
			t.Errorf("inspect -o yaml:\n%s", out)
		}
		out := mustRun(t, args...)
		if !hasLine(out, "Encryption:", "kms:v2:testkms") || !hasLine(out, "KMS key ID:", mockKeyID) {
			t.Errorf("inspect:\n%s", out)
		}
		// The key ID is read from the value, not asked of the plugin: the
		// value's envelope holds it without the config too.
		if err := json.Unmarshal([]byte(mustRun(t, "inspect", "secrets/db", "-n", ns, "-o", "json", etcdFlag)), &info); err != nil {
			t.Fatal(err)
		}
		if info.Encryption != "kms:v2:testkms" || info.KMSKeyID != mockKeyID || !strings.Contains(info.Problem, "encrypted with kms:v2:testkms") {
			t.Errorf("inspect without the config: %+v", info)
		}
	})

	t.Run("a secret regctl creates is served by the server", func(t *testing.T) {
		manifest := "apiVersion: v1\nkind: Secret\nmetadata: {name: api, namespace: " + ns + "}\nstringData: {token: s3cret}\n"
		mustRun(t, "create", "-f", manifestFile(t, manifest), etcdFlag, enc)
		storedWithKMS(t, "/registry/secrets/"+ns+"/api", "s3cret")
		got, err := s.Client.CoreV1().Secrets(ns).Get(ctx, "api", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the server cannot read what regctl created: %v", err)
		}
		if string(got.Data["token"]) != "s3cret" || len(got.Data) != 1 {
			t.Errorf("the server reads %q", got.Data)
		}
		var info etcdview.ValueInfo
		if err := json.Unmarshal([]byte(mustRun(t, "inspect", "secrets/api", "-n", ns, "-o", "json", etcdFlag, enc)), &info); err != nil {
			t.Fatal(err)
		}
		if info.Encryption != "kms:v2:testkms" || info.KMSKeyID != mockKeyID || info.Problem != "" {
			t.Errorf("inspect: %+v", info)
		}
	})

	t.Run("scan counts the secrets by the plugin's key ID", func(t *testing.T) {
		r := scanReport(t, "--only", "encryption", "--by", "namespace", etcdFlag, enc)
		secrets := resourceOf(t, r, "secrets", ns)
		want := "kms:v2:testkms (key ID " + mockKeyID + ")"
		if secrets.Encryption.Counts[want] != secrets.Keys || secrets.Encryption.StaleKey != 0 || r.FindingCounts[scan.Encryption] != 0 {
			t.Errorf("secrets: %+v, want every one under %q; findings %v", secrets.Encryption, want, r.Findings)
		}
	})

	t.Run("routes names each resource's write provider", func(t *testing.T) {
		var table routetable.RouteTable
		if err := json.Unmarshal([]byte(mustRun(t, "routes", "-o", "json", enc)), &table); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"secrets": "kms:v2:testkms", "configmaps": "aesgcm:v1:gcm1", "pods": "aesgcm:v1:gcm1"}
		for _, r := range table.Routes {
			if w, ok := want[r.Path]; ok {
				if r.Encryption != w {
					t.Errorf("%s: encryption %q, want %q", r.Path, r.Encryption, w)
				}
				delete(want, r.Path)
			}
		}
		if len(want) > 0 {
			t.Errorf("routes lacks %v", want)
		}
	})
}

// hasLine tells whether out has a line of exactly these words.
func hasLine(out string, words ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.Join(strings.Fields(line), " ") == strings.Join(words, " ") {
			return true
		}
	}
	return false
}

// runBinaryWithin runs the built regctl and fails the test if it is still
// running after limit.
func runBinaryWithin(t *testing.T, limit time.Duration, args ...string) (stderr string, code int) {
	t.Helper()
	_, stderr, code = runBinaryOutputWithin(t, limit, args...)
	return stderr, code
}

// runBinaryOutputWithin is runBinaryWithin that returns stdout too.
func runBinaryOutputWithin(t *testing.T, limit time.Duration, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, regctlBinary(t), args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%v: still running after %s; stderr %q", args, limit, errOut.String())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// TestKMSv2UnreachablePluginIsOneLine gives configs whose plugin does not
// answer. The plugin's timeout is longer than the test waits: the server
// would wait that long for its first answer, regctl stops within its
// request timeout.
func TestKMSv2UnreachablePluginIsOneLine(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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

// TestKMSv1AgreesWithKubeAPIServerBehindItsGate: KMS v1 is deprecated and
// the server takes it only with --feature-gates=KMSv1=true; so does regctl,
// which then reads and writes secrets as the server does. regctl runs as
// its own process, where the gate is its flag's alone.
func TestKMSv1AgreesWithKubeAPIServerBehindItsGate(t *testing.T) {
	dir := socketDir(t)
	socket := filepath.Join(dir, "kms.sock")
	kmsv1mock.NewBase64Plugin(t, socket)
	config := filepath.Join(dir, "encryption.yaml")
	if err := os.WriteFile(config, []byte(`apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
  - kms:
      name: oldkms
      endpoint: unix://`+socket+`
      cachesize: 10
      timeout: 3s
  - identity: {}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	const gate = "--feature-gates=KMSv1=true"
	enc := "--encryption-provider-config=" + config
	s := apiserver.Start(t, enc, gate)
	etcdFlag := "--etcd-servers=" + s.EtcdURL
	ctx := context.Background()
	if _, err := s.Client.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db"}, StringData: map[string]string{"password": "hunter2"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	stderr, code := runBinaryWithin(t, time.Minute, "get", "secret", "db", etcdFlag, enc)
	if code == 0 || !strings.Contains(stderr, "Set --feature-gates=KMSv1=true to use the deprecated KMSv1 feature") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("KMS v1 without its gate: exit %d, stderr %q; want the server's refusal in one line", code, stderr)
	}

	got := mustRunBinary(t, "get", "secret", "db", "-o", "json", "--show-managed-fields", etcdFlag, enc, gate)
	if want := serverGET(t, s, "/api/v1/namespaces/default/secrets/db"); normalize(t, []byte(got)) != normalize(t, want) {
		t.Errorf("regctl and the apiserver differ\nregctl:    %s\napiserver: %s", got, want)
	}
	var info etcdview.ValueInfo
	if err := json.Unmarshal([]byte(mustRunBinary(t, "inspect", "secrets/db", "-o", "json", etcdFlag, enc, gate)), &info); err != nil {
		t.Fatal(err)
	}
	if info.Encryption != "kms:v1:oldkms" || info.StoredKind != "Secret" || info.Problem != "" {
		t.Errorf("inspect: %+v", info)
	}

	mustRunBinary(t, "create", "-f", manifestFile(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: api, namespace: default}\nstringData: {token: s3cret}\n"), etcdFlag, enc, gate)
	served, err := s.Client.CoreV1().Secrets("default").Get(ctx, "api", metav1.GetOptions{})
	if err != nil || string(served.Data["token"]) != "s3cret" {
		t.Errorf("the server reads what regctl wrote as %v, %v", served, err)
	}
}
