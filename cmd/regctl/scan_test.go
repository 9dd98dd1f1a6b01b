package main

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	genericfeatures "k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"sigs.k8s.io/yaml"

	"github.com/regctl/regctl/internal/scan"
	"github.com/regctl/regctl/internal/storagemap/maptest"
	"github.com/regctl/regctl/test/apiserver"
)

// storageOn is the storage config of a second server on the etcd at url.
func storageOn(url string) *storagebackend.Config {
	c := storagebackend.NewDefaultConfig("/registry", nil)
	c.Transport.ServerList = []string{url}
	return c
}

func scanReport(t *testing.T, args ...string) *scan.Report {
	t.Helper()
	var r scan.Report
	if err := json.Unmarshal([]byte(mustRun(t, append([]string{"scan", "-o", "json"}, args...)...)), &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

func resourceOf(t *testing.T, r *scan.Report, resource, namespace string) scan.Resource {
	t.Helper()
	for _, res := range r.Resources {
		if res.Resource == resource && res.Namespace == namespace {
			return res
		}
	}
	t.Fatalf("no %s in namespace %q in the scan", resource, namespace)
	return scan.Resource{}
}

func findingKeys(r *scan.Report, kind, reason string) []string {
	var keys []string
	for _, f := range r.Findings {
		if f.Kind == kind && f.Reason == reason {
			keys = append(keys, f.Key)
		}
	}
	return keys
}

// envelopeCounts counts the values under prefix by their encryption
// envelope's provider:version:key, read straight from etcd: what the
// servers wrote.
func envelopeCounts(t *testing.T, c *clientv3.Client, prefix string) map[string]int64 {
	t.Helper()
	resp, err := c.Get(context.Background(), prefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, kv := range resp.Kvs {
		name := "identity"
		if rest, ok := bytes.CutPrefix(kv.Value, []byte("k8s:enc:")); ok {
			parts := bytes.SplitN(rest, []byte(":"), 4)
			name = string(bytes.Join(parts[:3], []byte(":")))
		}
		out[name]++
	}
	return out
}

// TestScanFollowsAnEncryptionRotation writes secrets through a real
// kube-apiserver with aescbc key1, rotates to key2 first and rewrites some,
// then adds config maps to the config: scan's counts per key equal what
// etcd holds, the secrets still under key1 and the plain config maps are
// findings, and `--fail-on encryption` fails until a server rewrites them.
func TestScanFollowsAnEncryptionRotation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	first := encryptionFlag(t, "first.yaml", map[string]string{"secrets": aescbc("key1") + identityProvider})
	rotated := encryptionFlag(t, "rotated.yaml", map[string]string{"secrets": aescbc("key2", "key1") + identityProvider})
	extended := encryptionFlag(t, "extended.yaml", map[string]string{
		"secrets":    aescbc("key2", "key1") + identityProvider,
		"configmaps": aescbc("key2") + identityProvider,
	})

	s := apiserver.Start(t, first)
	createNamespace(t, s, "shop")
	for _, name := range []string{"a", "b", "c", "d"} {
		if _, err := s.Client.CoreV1().Secrets("shop").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, StringData: map[string]string{"v": name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Client.CoreV1().ConfigMaps("shop").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	s.Stop()

	// The rotation: key2 writes, key1 still reads; two secrets rewritten.
	s = apiserver.StartOn(t, storageOn(s.EtcdURL), rotated)
	rewriteSecrets(t, s, "a", "b")
	s.Stop()
	etcd := etcdClient(t, s.EtcdURL)
	etcdFlag := "--etcd-servers=" + s.EtcdURL

	written := envelopeCounts(t, etcd, "/registry/secrets/shop/")
	if want := map[string]int64{"aescbc:v1:key1": 2, "aescbc:v1:key2": 2}; !equalCounts(written, want) {
		t.Fatalf("the servers wrote %v, want %v", written, want)
	}
	before := revisionOf(t, etcd)
	r := scanReport(t, "--by", "namespace", etcdFlag, extended)
	if after := revisionOf(t, etcd); after != before {
		t.Errorf("the scan moved the etcd revision from %d to %d", before, after)
	}
	secrets := resourceOf(t, r, "secrets", "shop")
	if !equalCounts(secrets.Encryption.Counts, written) || secrets.Encryption.StaleKey != 2 || secrets.Encryption.Writes != "aescbc:v1:key2" {
		t.Errorf("secrets in shop: %+v, want counts %v, 2 stale, writes aescbc:v1:key2", secrets.Encryption, written)
	}
	configMaps := resourceOf(t, r, "configmaps", "shop")
	if want := envelopeCounts(t, etcd, "/registry/configmaps/shop/"); !equalCounts(configMaps.Encryption.Counts, want) || configMaps.Encryption.Plaintext != 4 {
		t.Errorf("config maps in shop: %+v, want counts %v and 4 plain", configMaps.Encryption, want)
	}
	if got, want := findingKeys(r, scan.Encryption, scan.ReasonStaleKey), []string{"/registry/secrets/shop/c", "/registry/secrets/shop/d"}; !slices.Equal(got, want) {
		t.Errorf("stale-key findings %v, want %v", got, want)
	}
	plain := findingKeys(r, scan.Encryption, scan.ReasonPlaintext)
	for _, name := range []string{"a", "b", "c", "d"} {
		if !slices.Contains(plain, "/registry/configmaps/shop/"+name) {
			t.Errorf("no plaintext finding for config map %s: %v", name, plain)
		}
	}
	// Every config map the server holds is plain: each is a finding.
	var allConfigMaps int64
	for _, res := range r.Resources {
		if res.Resource == "configmaps" {
			allConfigMaps += res.Keys
		}
	}
	if r.FindingCounts[scan.Encryption] != 2+allConfigMaps {
		t.Errorf("encryption findings %d, want %d", r.FindingCounts[scan.Encryption], 2+allConfigMaps)
	}
	_, stderr, code := run(t, "scan", "--only", "encryption", "--fail-on", "encryption", etcdFlag, extended)
	if code != 1 || !strings.Contains(stderr, "the scan found") {
		t.Errorf("--fail-on encryption before the rewrite: exit %d, %q", code, stderr)
	}

	// A server on the extended config rewrites everything it should.
	s = apiserver.StartOn(t, storageOn(s.EtcdURL), extended)
	rewriteSecrets(t, s, "c", "d")
	cms, err := s.Client.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms.Items {
		cm.Labels = map[string]string{"rewritten": "yes"}
		if _, err := s.Client.CoreV1().ConfigMaps(cm.Namespace).Update(ctx, &cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	s.Stop()
	stdout, stderr, code := run(t, "scan", "--only", "encryption", "--fail-on", "encryption", etcdFlag, extended)
	if code != 0 {
		t.Errorf("--fail-on encryption after the rewrite: exit %d, %q\n%s", code, stderr, stdout)
	}
}

// rewriteSecrets has the server write the named secrets of shop again, as
// a storage migration does.
func rewriteSecrets(t *testing.T, s *apiserver.Server, names ...string) {
	t.Helper()
	ctx := context.Background()
	for _, name := range names {
		secret, err := s.Client.CoreV1().Secrets("shop").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		secret.Labels = map[string]string{"rotated": "yes"}
		if _, err := s.Client.CoreV1().Secrets("shop").Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func equalCounts(a, b map[string]int64) bool {
	for k, v := range a {
		if v != 0 && b[k] != v {
			return false
		}
	}
	for k, v := range b {
		if v != 0 && a[k] != v {
			return false
		}
	}
	return true
}

// TestScanTellsWhenAStoredVersionCanBeDropped moves a CRD's storage version
// from v1beta1 to v1 on a real kube-apiserver with objects written before
// and after: scan's counts per version, its verdict and the CRD's
// storedVersions agree with what the server wrote; once the old objects
// are rewritten, v1beta1 can be dropped.
func TestScanTellsWhenAStoredVersionCanBeDropped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := apiserver.Start(t)
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal([]byte(apiserver.WidgetsCRD), &crd); err != nil {
		t.Fatal(err)
	}
	// Stored at v1beta1 first.
	crd.Spec.Versions[0].Storage, crd.Spec.Versions[1].Storage = true, false
	crds := apiextensionsclient.NewForConfigOrDie(s.Config).ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(ctx, &crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createNamespace(t, s, "shop")
	widgetsV1beta1 := widgetsV1
	widgetsV1beta1.Version = "v1beta1"
	createWidget := func(name string) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := s.Dynamic.Resource(widgetsV1beta1).Namespace("shop").Create(ctx, widget("v1beta1", name, map[string]any{"size": "large"}), metav1.CreateOptions{})
			return err == nil, nil
		})
		if err != nil {
			t.Fatalf("creating widget %s: %v", name, err)
		}
	}
	createWidget("old-1")
	createWidget("old-2")
	// The storage version moves to v1.
	current, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	current.Spec.Versions[0].Storage, current.Spec.Versions[1].Storage = false, true
	if _, err := crds.Update(ctx, current, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The CRD handler serves the new storage version once it has seen the
	// update: until then a new object may still be stored at v1beta1, and
	// is written again until it is stored at v1.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if _, err := s.Dynamic.Resource(widgetsV1).Namespace("shop").Create(ctx, widget("v1", "new-1", map[string]any{}), metav1.CreateOptions{}); err != nil {
			return false, nil
		}
		raw, err := etcdClient(t, s.EtcdURL).Get(ctx, "/registry/example.com/widgets/shop/new-1")
		if err != nil || len(raw.Kvs) == 0 {
			return false, err
		}
		// The object's own apiVersion: its managedFields name the
		// version it was written through, which is v1 either way.
		var stored struct {
			APIVersion string `json:"apiVersion"`
		}
		if err := json.Unmarshal(raw.Kvs[0].Value, &stored); err != nil {
			return false, err
		}
		if stored.APIVersion == "example.com/v1" {
			return true, nil
		}
		return false, s.Dynamic.Resource(widgetsV1).Namespace("shop").Delete(ctx, "new-1", metav1.DeleteOptions{})
	})
	if err != nil {
		t.Fatalf("waiting for the server to store widgets at v1: %v", err)
	}
	served, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Stop()
	etcdFlag := "--etcd-servers=" + s.EtcdURL

	r := scanReport(t, "--only", "versions", etcdFlag)
	widgets := resourceOf(t, r, "widgets.example.com", "")
	v := widgets.Versions
	if !equalCounts(v.Counts, map[string]int64{"example.com/v1beta1": 2, "example.com/v1": 1}) || v.Writes != "example.com/v1" {
		t.Errorf("widget versions %+v, want 2 at v1beta1 and 1 at v1, written at v1", v)
	}
	if !slices.Equal(v.CRDStoredVersions, served.Status.StoredVersions) || !slices.Equal(v.CRDStoredVersions, []string{"v1beta1", "v1"}) {
		t.Errorf("storedVersions %v, the server's %v", v.CRDStoredVersions, served.Status.StoredVersions)
	}
	if len(v.Droppable) != 0 || !strings.Contains(v.Verdict, "2 at example.com/v1beta1") {
		t.Errorf("verdict %q, droppable %v: want the two v1beta1 objects to keep v1beta1", v.Verdict, v.Droppable)
	}
	if got, want := findingKeys(r, scan.Versions, scan.ReasonOldVersion), []string{"/registry/example.com/widgets/shop/old-1", "/registry/example.com/widgets/shop/old-2"}; !slices.Equal(got, want) {
		t.Errorf("old-version findings %v, want %v", got, want)
	}
	_, _, code := run(t, "scan", "--only", "versions", "--fail-on", "versions", etcdFlag)
	if code != 1 {
		t.Errorf("--fail-on versions with objects at v1beta1: exit %d", code)
	}
	// The table shows the CRD's storedVersions and the verdict too.
	table := mustRun(t, "scan", "--only", "versions", etcdFlag)
	for _, want := range []string{"CRD STORED VERSIONS", "VERDICT", "v1beta1,v1", "2 at example.com/v1beta1: rewrite them"} {
		if !strings.Contains(table, want) {
			t.Errorf("the versions table does not show %q:\n%s", want, table)
		}
	}

	// storedVersions edited by hand to leave out a version objects are
	// stored at: nothing would stop that version's removal from the CRD,
	// which would lose them. It is a finding of its own.
	crdJSON := mustRun(t, "get", "crd/"+crd.Name, "-o", "json", etcdFlag)
	edited := strings.Replace(crdJSON, `"storedVersions": [
            "v1beta1",
            "v1"
        ]`, `"storedVersions": [
            "v1"
        ]`, 1)
	if edited == crdJSON {
		t.Fatalf("no storedVersions to edit in:\n%s", crdJSON)
	}
	mustRun(t, "replace", "--subresource", "status", "-f", writeFile(t, "crd-status.json", edited), etcdFlag)
	r = scanReport(t, "--only", "versions", etcdFlag)
	if got := findingKeys(r, scan.Versions, scan.ReasonNotStoredVersion); !slices.Equal(got, []string{"/registry/example.com/widgets/"}) {
		t.Errorf("not-in-stored-versions findings %v, want the widgets' prefix", got)
	}
	if v := resourceOf(t, r, "widgets.example.com", "").Versions; !slices.Equal(v.Missing, []string{"example.com/v1beta1"}) || !strings.Contains(v.Verdict, "not in status.storedVersions") {
		t.Errorf("with storedVersions [v1]: %+v", v)
	}
	crdJSON = mustRun(t, "get", "crd/"+crd.Name, "-o", "json", etcdFlag)
	mustRun(t, "replace", "--subresource", "status", "-f", writeFile(t, "crd-status.json", strings.Replace(crdJSON, `"storedVersions": [
            "v1"
        ]`, `"storedVersions": [
            "v1beta1",
            "v1"
        ]`, 1)), etcdFlag)

	// Rewritten through the store, both old objects move to v1.
	for _, name := range []string{"old-1", "old-2"} {
		obj := mustRun(t, "get", "widgets/"+name, "-n", "shop", "-o", "json", etcdFlag)
		mustRun(t, "replace", "-f", writeFile(t, name+".json", obj), etcdFlag)
	}
	r = scanReport(t, "--only", "versions", "--fail-on", "versions", etcdFlag)
	v = resourceOf(t, r, "widgets.example.com", "").Versions
	if !slices.Equal(v.InUse, []string{"example.com/v1"}) || !slices.Equal(v.Droppable, []string{"v1beta1"}) || !strings.Contains(v.Verdict, "v1beta1 can be dropped") {
		t.Errorf("after the rewrite: %+v, want v1 alone in use and v1beta1 droppable", v)
	}
}

// TestScanFindsCorruptValuesAndOrphans damages an etcd a real server filled:
// garbage, a truncated protobuf, a value under another object's key, a
// secret encrypted with a key no longer configured, a protobuf field the
// type does not declare, a custom resource with a field its schema prunes,
// and a CRD deleted by deleting its key alone. Each
// is found by key; everything else is still reported; a snapshot of the
// same etcd gives the same report.
func TestScanFindsCorruptValuesAndOrphans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	old := encryptionFlag(t, "old.yaml", map[string]string{"secrets": aescbc("key1") + identityProvider})
	current := encryptionFlag(t, "current.yaml", map[string]string{"secrets": aescbc("key2") + identityProvider})
	s := apiserver.Start(t, old)
	apiserver.CreateWidgetsCRD(t, s)
	createNamespace(t, s, "shop")
	for _, name := range []string{"fine", "source", "extra"} {
		if _, err := s.Client.CoreV1().ConfigMaps("shop").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Client.CoreV1().Secrets("shop").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "lost"}, StringData: map[string]string{"v": "x"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Dynamic.Resource(widgetsV1).Namespace("shop").Create(ctx, widget("v1", "kept", map[string]any{}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A second CRD, whose definition alone is deleted below.
	gizmos := strings.NewReplacer("widgets", "gizmos", "widget", "gizmo", "Widget", "Gizmo", "[wd]", "[gz]").Replace(apiserver.WidgetsCRD)
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal([]byte(gizmos), &crd); err != nil {
		t.Fatal(err)
	}
	if _, err := apiextensionsclient.NewForConfigOrDie(s.Config).ApiextensionsV1().CustomResourceDefinitions().Create(ctx, &crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gizmosV1 := widgetsV1
	gizmosV1.Resource = "gizmos"
	gizmo := widget("v1", "left", map[string]any{})
	gizmo.SetKind("Gizmo")
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := s.Dynamic.Resource(gizmosV1).Namespace("shop").Create(ctx, gizmo, metav1.CreateOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("creating a gizmo: %v", err)
	}
	s.Stop()
	etcd := etcdClient(t, s.EtcdURL)
	get := func(key string) []byte {
		t.Helper()
		resp, err := etcd.Get(ctx, key)
		if err != nil || len(resp.Kvs) == 0 {
			t.Fatalf("reading %s: %v", key, err)
		}
		return resp.Kvs[0].Value
	}
	put := func(key string, value []byte) {
		t.Helper()
		if _, err := etcd.Put(ctx, key, string(value)); err != nil {
			t.Fatal(err)
		}
	}
	const cms = "/registry/configmaps/shop/"
	source := get(cms + "source")
	put(cms+"garbage", []byte("not a kubernetes object"))
	put(cms+"truncated", source[:len(source)/2])
	put(cms+"moved", source)
	put(cms+"extra", maptest.WithUnknownField(t, get(cms+"extra"), 99))
	const widgets = "/registry/example.com/widgets/shop/"
	put(widgets+"kept", bytes.Replace(get(widgets+"kept"), []byte(`"spec":{`), []byte(`"spec":{"shade":"teal",`), 1))
	gizmoBytes := int64(len(get("/registry/example.com/gizmos/shop/left")))
	if _, err := etcd.Delete(ctx, "/registry/apiextensions.k8s.io/customresourcedefinitions/gizmos.example.com"); err != nil {
		t.Fatal(err)
	}
	etcdFlag := "--etcd-servers=" + s.EtcdURL

	r := scanReport(t, etcdFlag, current)
	for _, c := range []struct{ reason, key string }{
		{scan.ReasonUndecodable, cms + "garbage"},
		{scan.ReasonUndecodable, cms + "truncated"},
		{scan.ReasonWrongKey, cms + "moved"},
		{scan.ReasonUnknownFields, cms + "extra"},
		{scan.ReasonUnknownFields, widgets + "kept"},
	} {
		if !slices.Contains(findingKeys(r, scan.Corrupt, c.reason), c.key) {
			t.Errorf("no %s finding for %s: %v", c.reason, c.key, r.Findings)
		}
	}
	if n := r.FindingCounts[scan.Corrupt]; n != 5 {
		t.Errorf("%d corrupt findings, want 5: %v", n, r.Findings)
	}
	// A secret encrypted with a key the config lacks is the flags' doing,
	// not damage.
	if lost := findingKeys(r, scan.Encryption, scan.ReasonKeyMissing); !slices.Equal(lost, []string{"/registry/secrets/shop/lost"}) {
		t.Errorf("key-missing findings %v: want the secret encrypted with a key no longer configured", lost)
	}
	for _, f := range r.Findings {
		if f.Key == cms+"extra" && !strings.Contains(f.Detail, "#99") {
			t.Errorf("unknown field finding %q does not name field 99", f.Detail)
		}
		if f.Key == widgets+"kept" && !strings.Contains(f.Detail, "does not know: spec.shade;") {
			t.Errorf("unknown field finding %q does not name spec.shade", f.Detail)
		}
	}
	// The readable config maps are still counted and versioned.
	configMaps := resourceOf(t, r, "configmaps", "")
	if configMaps.Versions.Counts["v1"] < 4 || configMaps.Corrupt[scan.ReasonUndecodable] != 2 || configMaps.Corrupt[scan.ReasonWrongKey] != 1 {
		t.Errorf("config maps: versions %+v, corrupt %v", configMaps.Versions, configMaps.Corrupt)
	}
	var orphan *scan.Orphan
	for i, o := range r.Orphans {
		if o.KeyPrefix == "/registry/example.com/gizmos/" {
			orphan = &r.Orphans[i]
		}
	}
	if orphan == nil || orphan.Keys != 1 || orphan.Bytes != gizmoBytes {
		t.Errorf("orphans %+v: want the gizmo's key under /registry/example.com/gizmos/ with %d bytes", r.Orphans, gizmoBytes)
	}
	if got := findingKeys(r, scan.Orphans, scan.ReasonUnclaimed); !slices.Equal(got, []string{"/registry/example.com/gizmos/shop/left"}) {
		t.Errorf("orphan findings %v: want the gizmo alone", got)
	}

	// get and inspect of the gone CRD's resource say it is gone and how
	// many keys remain, and print its object as stored, to save.
	gone := "Warning: customresourcedefinition gizmos.example.com is gone: 1 key remains under /registry/example.com/gizmos/"
	stdout, stderr, code := run(t, "get", "gizmos.example.com", "-n", "shop", "-o", "yaml", etcdFlag, current)
	if code != 0 || !strings.Contains(stderr, gone) || strings.Count(stderr, "\n") != 1 || !strings.Contains(stdout, "kind: Gizmo") || !strings.Contains(stdout, "name: left") {
		t.Errorf("get of a gone CRD's objects: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if stdout, _, code := run(t, "get", "gizmos.example.com", "-A", "-o", "name", etcdFlag, current); code != 0 || stdout != "gizmo.example.com/left\n" {
		t.Errorf("get -o name of a gone CRD's objects: exit %d, %q", code, stdout)
	}
	if stdout, stderr, code := run(t, "inspect", "gizmos.example.com/left", "-n", "shop", etcdFlag, current); code != 0 || !strings.Contains(stdout, "/registry/example.com/gizmos/shop/left") || !strings.Contains(stderr, gone) {
		t.Errorf("inspect of a gone CRD's object: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if _, stderr, code := run(t, "get", "nothings.example.com", etcdFlag, current); code == 0 || !strings.Contains(stderr, `unknown resource "nothings.example.com"`) {
		t.Errorf("get of a resource with no CRD and no objects: exit %d, %q", code, stderr)
	}
	// The node port allocator's range, which the server keeps beside the
	// map, is not an orphan.
	if len(r.Allocations) != 1 || r.Allocations[0].Key != "/registry/ranges/servicenodeports" {
		t.Errorf("allocations %+v: want the server's node port range", r.Allocations)
	}
	_, stderr, code = run(t, "scan", "--fail-on", "corrupt", etcdFlag, current)
	if code != 1 || !strings.Contains(stderr, "the scan found 5 corrupt findings") {
		t.Errorf("--fail-on corrupt: exit %d, %q", code, stderr)
	}
	// The table names each finding's key.
	table := mustRun(t, "scan", etcdFlag, current)
	for _, key := range []string{cms + "garbage", cms + "moved", "/registry/secrets/shop/lost", "/registry/example.com/gizmos/"} {
		if !strings.Contains(table, key) {
			t.Errorf("the table does not show %s:\n%s", key, table)
		}
	}

	// A snapshot of that etcd reports the same.
	path := saveSnapshot(t, etcd)
	live := mustRun(t, "scan", "-o", "json", "--by", "namespace", etcdFlag, current)
	fromSnapshot := mustRun(t, "scan", "-o", "json", "--by", "namespace", "--snapshot", path, current)
	if live != fromSnapshot {
		t.Errorf("the snapshot's report differs from the live etcd's:\nlive:\n%s\nsnapshot:\n%s", live, fromSnapshot)
	}
}

func TestScanFlags(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"scan", "--only", "sizes"}, `unknown --only value "sizes": valid values are size,encoding,encryption,versions,corrupt,orphans`},
		{[]string{"scan", "--fail-on", "size"}, `unknown --fail-on value "size": valid values are encryption,versions,corrupt,orphans`},
		{[]string{"scan", "--by", "node"}, `unknown --by "node": the one value is namespace`},
		{[]string{"scan", "-o", "name"}, `unknown output format "name"`},
		{[]string{"scan"}, "no etcd"},
	} {
		_, stderr, code := run(t, c.args...)
		if code == 0 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, %q, want one line with %q", c.args, code, stderr, c.want)
		}
	}
}

// TestScanSetsTheApiserversLeasesApart scans the etcd of a running
// kube-apiserver: the endpoint leases it keeps beside the map (its endpoint
// reconciler's and its peer proxy's) are listed apart, not as orphans, so
// `--fail-on orphans` passes on a fresh cluster.
func TestScanSetsTheApiserversLeasesApart(t *testing.T) {
	t.Parallel()
	// A real server's endpoint reconciler writes masterleases; since
	// Kubernetes 1.37 the test server turns it off unless given an address
	// to advertise, which may not be a loopback one.
	s := apiserver.Start(t, "--advertise-address=192.0.2.10")
	etcdFlag := "--etcd-servers=" + s.EtcdURL
	etcd := etcdClient(t, s.EtcdURL)
	// The server writes its leases once started; wait for both.
	var leased []string
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		// Values too: since etcd 3.7 a keys-only range says no lease.
		resp, err := etcd.Get(ctx, "/registry/", clientv3.WithPrefix())
		if err != nil {
			return false, err
		}
		leased = nil
		for _, kv := range resp.Kvs {
			// Events carry a lease too, their TTL: they are objects of
			// the map, not the apiserver's own keys.
			if kv.Lease != 0 && !strings.HasPrefix(string(kv.Key), "/registry/events/") {
				leased = append(leased, string(kv.Key))
			}
		}
		// Peer server leases are the mixed version proxy's, beta (on by
		// default) since Kubernetes 1.36.
		peer := !utilfeature.DefaultFeatureGate.Enabled(genericfeatures.UnknownVersionInteroperabilityProxy) ||
			slices.ContainsFunc(leased, func(k string) bool { return strings.HasPrefix(k, "/registry/peerserverleases/") })
		return slices.ContainsFunc(leased, func(k string) bool { return strings.HasPrefix(k, "/registry/masterleases/") }) && peer, nil
	})
	if err != nil {
		t.Fatalf("the server's leases %v: %v", leased, err)
	}

	r := scanReport(t, "--only", "orphans", etcdFlag)
	var got []string
	for _, l := range r.Leases {
		got = append(got, l.Key)
	}
	for _, key := range leased {
		if !slices.Contains(got, key) {
			t.Errorf("the lease %s is not listed apart: leases %v, orphans %+v", key, got, r.Orphans)
		}
	}
	if len(r.Orphans) != 0 {
		t.Errorf("orphans on a fresh cluster: %+v", r.Orphans)
	}
	if _, stderr, code := run(t, "scan", "--fail-on", "orphans", etcdFlag); code != 0 {
		t.Errorf("--fail-on orphans on a fresh cluster: exit %d, %q", code, stderr)
	}
	table := mustRun(t, "scan", "--only", "orphans", etcdFlag)
	if !strings.Contains(table, "Apiserver endpoint leases") || !strings.Contains(table, leased[0]) {
		t.Errorf("the table does not show the leases:\n%s", table)
	}
}
