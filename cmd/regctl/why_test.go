package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regctl/regctl/internal/why"
)

// TestWhyOnLiveSnapshotAndSandbox: why says the same of a namespace on a
// live etcd and on its snapshot, and of an object deleted in a sandbox,
// and refuses a namespace that never was.
func TestWhyOnLiveSnapshotAndSandbox(t *testing.T) {
	t.Parallel()
	e := newLiveEtcd(t)
	c := e.client
	ctx := context.Background()
	for key, value := range map[string]string{
		"/registry/namespaces/shop":      `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"shop","uid":"ns-1","deletionTimestamp":"2026-11-29T14:00:00Z"},"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Terminating"}}`,
		"/registry/configmaps/shop/held": `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"held","namespace":"shop","uid":"cm-1","deletionTimestamp":"2026-11-29T14:00:00Z","finalizers":["example.com/hold"]}}`,
	} {
		if _, err := c.Put(ctx, key, value); err != nil {
			t.Fatal(err)
		}
	}
	etcd := e.flag()
	before := e.revision(t)
	live, stderr, code := run(t, "why", "namespace/shop", etcd)
	if code != 0 || stderr != "" {
		t.Fatalf("why on a live etcd: exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{
		"namespaces/shop: Terminating since 2026-11-29T14:00:00Z",
		"├─ 1 object remains: configmaps 1",
		"finalizer example.com/hold: not Kubernetes' own",
		"kubectl patch configmaps held -n shop --type=json",
		"warning: 1 object still stored in namespace shop would stay in etcd, orphaned: once the namespace is gone nothing serves or deletes it",
	} {
		if !strings.Contains(live, want) {
			t.Errorf("why does not say %q:\n%s", want, live)
		}
	}
	snapshot, stderr, code := run(t, "why", "namespace/shop", "--snapshot", saveSnapshot(t, c))
	if code != 0 || snapshot != live {
		t.Errorf("why on the snapshot: exit %d, stderr %q, and\n%s\nwant what it says live:\n%s", code, stderr, snapshot, live)
	}
	data, _, code := run(t, "why", "namespace/shop", "-o", "json", etcd)
	var r why.Report
	if err := json.Unmarshal([]byte(data), &r); code != 0 || err != nil || len(r.Objects) != 1 || r.Objects[0].Finalizers[0].Name != "example.com/hold" {
		t.Errorf("-o json: exit %d, %v: %s", code, err, data)
	}
	if _, stderr, code := run(t, "why", "namespace/none", etcd); code != 1 || stderr != "error: namespaces \"none\" not found\n" {
		t.Errorf("a namespace that never was: exit %d, stderr %q", code, stderr)
	}

	if after := e.revision(t); after != before {
		t.Errorf("why moved etcd's revision from %d to %d", before, after)
	}

	dir := filepath.Join(t.TempDir(), "sandbox")
	manifest := filepath.Join(t.TempDir(), "cm.yaml")
	if err := os.WriteFile(manifest, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  namespace: shop\n  finalizers: [example.com/hold]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRunIn(t, t.TempDir(), "--data-dir", dir, "create", "-f", filepath.Join(examplesDir(t), "namespace.yaml"))
	mustRunIn(t, t.TempDir(), "--data-dir", dir, "create", "-f", manifest)
	mustRunIn(t, t.TempDir(), "--data-dir", dir, "delete", "configmaps/held", "-n", "shop")
	out, stderr, code := run(t, "why", "configmaps/held", "-n", "shop", "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "configmaps/held -n shop: deleting since") || !strings.Contains(out, `"value":"example.com/hold"`) {
		t.Errorf("why in a sandbox: exit %d, stderr %q:\n%s", code, stderr, out)
	}
}
