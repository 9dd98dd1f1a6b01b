package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/routetable"
)

// encryptionConfig writes an apiserver EncryptionConfiguration that encrypts
// secrets with aescbc key "key1".
func encryptionConfig(t *testing.T) string {
	t.Helper()
	return encryptionConfigFile(t, "encryption.yaml", map[string]string{"secrets": aescbc("key1") + identityProvider})
}

// aescbc keys of the encryption configs below.
const (
	key1 = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	key2 = "ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA="
)

// encryptionFlag is --encryption-provider-config of a config written by
// encryptionConfigFile.
func encryptionFlag(t *testing.T, name string, rules map[string]string) string {
	return "--encryption-provider-config=" + encryptionConfigFile(t, name, rules)
}

// encryptionConfigFile writes an EncryptionConfiguration of one provider
// list per resource list.
func encryptionConfigFile(t *testing.T, name string, rules map[string]string) string {
	t.Helper()
	config := "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n"
	for _, resources := range slices.Sorted(func(yield func(string) bool) {
		for k := range rules {
			if !yield(k) {
				return
			}
		}
	}) {
		config += "- resources: [" + resources + "]\n  providers:\n" + rules[resources]
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func aescbc(keys ...string) string {
	out := "  - aescbc:\n      keys:\n"
	for _, k := range keys {
		secret := key1
		if k == "key2" {
			secret = key2
		}
		out += "      - name: " + k + "\n        secret: " + secret + "\n"
	}
	return out
}

const identityProvider = "  - identity: {}\n"

func TestEncryptionAtRest(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	enc := "--encryption-provider-config=" + encryptionConfig(t)
	secret := shopNamespace + "---\napiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: shop}\nstringData: {password: hunter2}\n"
	for _, name := range []string{"db2", "db3"} {
		secret += "---\napiVersion: v1\nkind: Secret\nmetadata: {name: " + name + ", namespace: shop}\nstringData: {password: hunter2}\n"
	}
	secrets := manifestFile(t, secret)
	mustRun(t, "create", "-f", secrets, s.flag(), enc)

	// The route table says what the server would do with that config.
	var table routetable.RouteTable
	if err := json.Unmarshal([]byte(mustRun(t, "routes", "-o", "json", enc)), &table); err != nil {
		t.Fatal(err)
	}
	for _, r := range table.Routes {
		want := "identity"
		if r.Path == "secrets" {
			want = "aescbc:v1:key1"
		}
		if r.Store == routetable.StoreOwn && r.Encryption != want {
			t.Errorf("%s: encryption %q, want %q", r.Path, r.Encryption, want)
		}
	}

	// What etcd holds is encrypted with the configured key.
	raw := s.rawValue(t, "/registry/secrets/shop/db")
	if !bytes.HasPrefix(raw, []byte("k8s:enc:aescbc:v1:key1:")) || bytes.Contains(raw, []byte("hunter2")) {
		t.Fatalf("stored value %q: want an aescbc envelope and no plain text", raw[:min(len(raw), 40)])
	}

	// With the config, reads decrypt; inspect decodes the stored type.
	if got := mustRun(t, "get", "secrets/db", "-n", "shop", "-o", "yaml", s.flag(), enc); !strings.Contains(got, "password: aHVudGVyMg==") {
		t.Errorf("get with the key:\n%s", got)
	}
	var info etcdview.ValueInfo
	if err := json.Unmarshal([]byte(mustRun(t, "inspect", "secrets/db", "-n", "shop", "-o", "json", s.flag(), enc)), &info); err != nil {
		t.Fatal(err)
	}
	if info.Encryption != "aescbc:v1:key1" || info.StoredKind != "Secret" || info.Encoding != "application/vnd.kubernetes.protobuf" || info.Problem != "" {
		t.Errorf("inspect with the key: %+v", info)
	}

	// Without it, the key and the provider are named, once: a list, a
	// diff and a migration say so in one line, before anything is read
	// or written, and advise nothing else.
	rev := s.revision(t)
	noConfig := "secrets are encrypted with aescbc:v1:key1 and no encryption config is given: pass the server's `--encryption-provider-config`"
	otherKey := "--encryption-provider-config=" + writeFile(t, "key2.yaml", "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n"+aescbc("key2"))
	lacking := "secrets are encrypted with aescbc:v1:key1, which the encryption config does not hold: pass the `--encryption-provider-config` that holds that key"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "secrets/db", "-n", "shop", s.flag()}, noConfig},
		{[]string{"get", "secrets", "-n", "shop", s.flag()}, noConfig},
		{[]string{"get", "secrets", "-A", "-o", "yaml", s.flag()}, noConfig},
		{[]string{"get", "secrets", "-n", "shop", s.flag(), otherKey}, lacking},
		{[]string{"migrate", "secrets", "--encryption", s.flag(), otherKey}, lacking},
		{[]string{"migrate", "--versions", s.flag()}, noConfig},
		{[]string{"diff", "--from", "rev:1", "secrets", "--patch", s.flag()}, noConfig},
		{[]string{"diff", "-f", secrets, s.flag()}, noConfig},
	} {
		stdout, stderr, code := run(t, c.args...)
		// A yaml list that stops says so, lest it pass for an empty one.
		stdout = strings.TrimPrefix(stdout, "@incomplete: reading stopped before the end of the list; see the error on stderr\n")
		if code == 0 || strings.TrimSpace(stderr) != "error: "+c.want || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want one line %q", c.args, code, stdout, stderr, c.want)
		}
	}
	if got := s.revision(t); got != rev {
		t.Errorf("the revision moved from %d to %d: something was written", rev, got)
	}
}

func TestGetSubresource(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace+"---\n"+webPod), s.flag())
	for _, args := range [][]string{
		{"get", "pods/status", "web", "-n", "shop", "-o", "json"},
		{"get", "pods/web", "--subresource", "status", "-n", "shop", "-o", "json"},
	} {
		out := mustRun(t, append(args, s.flag())...)
		if !strings.Contains(out, `"kind": "Pod"`) || !strings.Contains(out, `"phase": "Pending"`) {
			t.Errorf("%v: %s", args, out)
		}
	}
	if _, stderr, code := run(t, "get", "pods/binding", "web", "-n", "shop", s.flag()); code == 0 || !strings.Contains(stderr, "pods/binding does not serve get: only create") {
		t.Errorf("get of a create-only subresource: exit %d, %q", code, stderr)
	}
}
