package encryption

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// key is a 32-byte key, base64, as every provider here takes one.
const key = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="

func loadConfig(t *testing.T, config string) *Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), "encryption.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(context.Background(), path, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

// TestTheWriterIsTheServersPick holds WriterOf to the server's rules: the
// first provider of the first entry that names a resource writes it, an
// exact resource before its group's wildcard before *.*, and a resource
// no entry names is written as it is.
func TestTheWriterIsTheServersPick(t *testing.T) {
	c := loadConfig(t, `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
  - aescbc: {keys: [{name: key2, secret: `+key+`}, {name: key1, secret: `+key+`}]}
  - identity: {}
- resources: [secrets, configmaps]
  providers:
  - aesgcm: {keys: [{name: later, secret: `+key+`}]}
- resources: ["*.apps"]
  providers:
  - secretbox: {keys: [{name: box, secret: `+key+`}]}
- resources: ["*.*"]
  providers:
  - identity: {}
  - aesgcm: {keys: [{name: gcm, secret: `+key+`}]}
`)
	for gr, want := range map[schema.GroupResource]string{
		{Resource: "secrets"}:                    "aescbc:v1:key2",
		{Resource: "configmaps"}:                 "aesgcm:v1:later",
		{Group: "apps", Resource: "deployments"}: "secretbox:v1:box",
		{Resource: "pods"}:                       "identity",
	} {
		if got := c.WriterOf(gr); got != want {
			t.Errorf("%s is written by %q, want %q", gr, got, want)
		}
	}
	// What each is read with, in the order the server tries: every key
	// of every provider of the entry that names it.
	for gr, want := range map[schema.GroupResource]string{
		{Resource: "secrets"}:                    "aescbc:v1:key2, aescbc:v1:key1, identity",
		{Resource: "configmaps"}:                 "aesgcm:v1:later",
		{Group: "apps", Resource: "deployments"}: "secretbox:v1:box",
		{Resource: "pods"}:                       "identity, aesgcm:v1:gcm",
	} {
		if got := c.ReadersOf(gr); got != want {
			t.Errorf("%s is read with %q, want %q", gr, got, want)
		}
	}
	if c.Transformers == nil {
		t.Error("no transformers for the stores")
	}
}

// TestNoConfigWritesAsItIs: without --encryption-provider-config every
// resource is written in plain text, and a file that is not there is one
// error that names it.
func TestNoConfigWritesAsItIs(t *testing.T) {
	c, err := Load(context.Background(), "", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.Stop()
	if got := c.WriterOf(schema.GroupResource{Resource: "secrets"}); got != "identity" {
		t.Errorf("secrets are written by %q with no config", got)
	}
	missing := filepath.Join(t.TempDir(), "none.yaml")
	if _, err := Load(context.Background(), missing, time.Second); err == nil || !strings.HasPrefix(err.Error(), "loading `--encryption-provider-config`: ") || !strings.Contains(err.Error(), "none.yaml") {
		t.Errorf("a missing config: %v", err)
	}
}
