package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/scan"
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

// TestAKeyThatIsNotTheServersIsNoDamage reads secrets with a config whose
// key has the server's name but other bytes (the config on disk is not the
// one the server runs): every command says once which key failed on how
// many values, that it is likely not the server's, and never calls the
// values damaged nor advises removing them; scan counts them in its
// encryption section, and a migration writes nothing. With the server's
// key, a value it does not decrypt is damaged, and said so.
func TestAKeyThatIsNotTheServersIsNoDamage(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	server := encryptionFlag(t, "server.yaml", map[string]string{"secrets": aescbc("key1") + identityProvider})
	other := encryptionFlag(t, "other.yaml", map[string]string{"secrets": strings.Replace(aescbc("key1"), key1, key2, 1) + identityProvider})
	var m strings.Builder
	m.WriteString(shopNamespace)
	for i := range 50 {
		fmt.Fprintf(&m, "---\napiVersion: v1\nkind: Secret\nmetadata: {name: s-%02d, namespace: shop}\nstringData: {password: p%d}\n", i, i)
	}
	mustRun(t, "create", "-f", manifestFile(t, m.String()), s.flag(), server)
	before := s.revision(t)

	said := "50 secrets encrypted with aescbc:v1:key1 could not be decrypted with the encryption config's aescbc \"key1\" ("
	for _, args := range [][]string{
		{"get", "secrets", "-n", "shop"},
		{"get", "secrets", "-n", "shop", "-o", "yaml", "--chunk-size", "7"},
		{"migrate", "--dry-run=server"},
		{"migrate", "secrets", "--encryption"},
	} {
		stdout, stderr, code := run(t, append(args, s.flag(), other)...)
		if code == 0 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, said) || !strings.Contains(stderr, "likely not the server's") ||
			strings.Contains(stderr+stdout, "corrupt") || strings.Contains(stderr+stdout, "remove") {
			t.Errorf("%v: exit %d, stderr %q, stdout %.300q: want one line naming the key and its 50 values", args, code, stderr, stdout)
		}
	}
	if _, stderr, code := run(t, "get", "secrets/s-01", "-n", "shop", s.flag(), other); code == 0 || strings.Count(stderr, "\n") != 1 ||
		!strings.Contains(stderr, "encrypted with aescbc:v1:key1 could not be decrypted with the encryption config's aescbc \"key1\"") || strings.Contains(stderr, "corrupt") {
		t.Errorf("get one: exit %d, stderr %q", code, stderr)
	}
	if after := s.revision(t); after != before {
		t.Errorf("the etcd revision moved from %d to %d", before, after)
	}

	var r scan.Report
	if err := json.Unmarshal([]byte(mustRun(t, "scan", "-o", "json", s.flag(), other)), &r); err != nil {
		t.Fatal(err)
	}
	mismatched := findingKeys(&r, scan.Encryption, scan.ReasonKeyMismatch)
	if len(mismatched) != 50 || r.FindingCounts[scan.Encryption] != 50 || r.FindingCounts[scan.Corrupt] != 0 ||
		!slices.Equal(r.KeysThatDecryptNothing, []scan.KeyCount{{Key: "aescbc:v1:key1", Values: 50}}) {
		t.Errorf("scan: %d key-mismatch findings, counts %v, keys that decrypt nothing %v: want the 50, under encryption", len(mismatched), r.FindingCounts, r.KeysThatDecryptNothing)
	}
	if _, _, code := run(t, "scan", "--only", "encryption", "--fail-on", "encryption", s.flag(), other); code != 1 {
		t.Errorf("scan --only encryption --fail-on encryption: exit %d, want 1", code)
	}

	// The server's key decrypts the others: a value it does not decrypt
	// is damaged.
	value := s.rawValue(t, "/registry/secrets/shop/s-07")
	value[len(value)-5] ^= 0xff
	if _, err := s.client.Put(context.Background(), "/registry/secrets/shop/s-07", string(value)); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(mustRun(t, "scan", "-o", "json", s.flag(), server)), &r); err != nil {
		t.Fatal(err)
	}
	if damaged := findingKeys(&r, scan.Corrupt, scan.ReasonUndecryptable); !slices.Equal(damaged, []string{"/registry/secrets/shop/s-07"}) || r.FindingCounts[scan.Encryption] != 0 {
		t.Errorf("scan with the server's key: damaged %v, counts %v", damaged, r.FindingCounts)
	}
	stdout, stderr, code := run(t, "get", "secrets", "-n", "shop", "-o", "name", s.flag(), server)
	if code != 1 || strings.Count(stdout, "\n") != 49 || !strings.Contains(stderr, "s-07: cannot decrypt the value encrypted with aescbc:v1:key1, though the encryption config's key decrypts 49 other secrets with it: the value is damaged") {
		t.Errorf("get with the server's key: exit %d, %d listed, stderr %q", code, strings.Count(stdout, "\n"), stderr)
	}
}
