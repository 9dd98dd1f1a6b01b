package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	kmsv2mock "k8s.io/apiserver/pkg/storage/value/encrypt/envelope/testing/v2"
	"k8s.io/client-go/util/retry"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/migrate"
	"github.com/regctl/regctl/test/apiserver"
)

// migrateReport runs regctl migrate with args and -o json and returns its
// report and exit code.
func migrateReport(t *testing.T, args ...string) (*migrate.Report, int) {
	t.Helper()
	stdout, stderr, code := run(t, append([]string{"migrate", "-o", "json"}, args...)...)
	r := &migrate.Report{}
	if err := json.Unmarshal([]byte(stdout), r); err != nil {
		t.Fatalf("migrate %v: %v (exit %d): %s%s", args, err, code, stdout, stderr)
	}
	return r, code
}

// resourceReport is what r says of resource.
func resourceReport(r *migrate.Report, resource string) migrate.Resource {
	for _, res := range r.Resources {
		if res.Resource == resource {
			return res
		}
	}
	return migrate.Resource{}
}

// TestMigrateReencryptsAsTheServerMigrates rotates the key secrets are
// encrypted with, as the runbook does, beside a running kube-apiserver
// that keeps updating some of them: regctl rewrites the others with the new
// key, loses none of the server's updates, and leaves each object as the
// server's own storage version migration (an empty apply) leaves it.
func TestMigrateReencryptsAsTheServerMigrates(t *testing.T) {
	t.Parallel()
	old := encryptionFlag(t, "old.yaml", map[string]string{"secrets": aescbc("key1") + identityProvider})
	rotated := encryptionFlag(t, "rotated.yaml", map[string]string{"secrets": aescbc("key2", "key1") + identityProvider})
	e := newLiveEtcd(t)
	storageConfig := storagebackend.NewDefaultConfig("/registry", nil)
	storageConfig.Transport.ServerList = []string{e.url}
	s := apiserver.StartOn(t, storageConfig, old)
	etcdFlag := e.flag()
	ctx := context.Background()
	const ns = "rotate"
	if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const count, busy = 30, 20 // s20...s29 are updated during the migration
	for i := range count {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s%02d", i), Namespace: ns}, Data: map[string][]byte{"n": []byte("0")}}
		if _, err := s.Client.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The runbook: the new key goes first, and the servers restart.
	s.Stop()
	s = apiserver.StartOn(t, storageConfig, rotated)
	secrets := s.Client.CoreV1().Secrets(ns)
	before, err := secrets.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	managedBefore := map[string][]metav1.ManagedFieldsEntry{}
	for _, secret := range before.Items {
		managedBefore[secret.Name] = secret.ManagedFields
	}

	// What the server's StorageVersionMigration controller sends for s00.
	s00 := before.Items[0]
	svm := fmt.Sprintf(`{"apiVersion":"v1","kind":"Secret","metadata":{"uid":%q,"resourceVersion":%q}}`, s00.UID, s00.ResourceVersion)
	if _, err := secrets.Patch(ctx, s00.Name, types.ApplyPatchType, []byte(svm), metav1.PatchOptions{FieldManager: "storage-version-migrator-controller"}); err != nil {
		t.Fatal(err)
	}

	w, err := secrets.Watch(ctx, metav1.ListOptions{ResourceVersion: before.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var updates sync.WaitGroup
	updates.Go(func() {
		for round := 1; round <= 3; round++ {
			for i := busy; i < count; i++ {
				name := fmt.Sprintf("s%02d", i)
				// As a controller updates: read, change, write, and read
				// again when another writer (the migration) came first.
				err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
					secret, err := secrets.Get(ctx, name, metav1.GetOptions{})
					if err != nil {
						return err
					}
					secret.Data["n"] = []byte(fmt.Sprint(round))
					_, err = secrets.Update(ctx, secret, metav1.UpdateOptions{})
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	})
	report, code := migrateReport(t, "secrets", "-n", ns, "--encryption", "--qps=20", etcdFlag, rotated)
	updates.Wait()
	if code != 0 {
		t.Fatalf("migrate exited %d: %+v", code, report)
	}
	res := resourceReport(report, "secrets")
	// The server rewrote s00, and may have updated some of s20...s29
	// before the scan chose the values: those are current.
	if res.Selected < busy-1 || res.Selected > count-1 || res.Reasons["stale-key"] != res.Selected || res.Rewritten+res.Current != res.Selected || res.Failed != 0 || res.Rewritten < busy-1 {
		t.Errorf("secrets: %+v; want s01...s19 and the secrets the server had not updated yet chosen as stale-key, each rewritten or found current", res)
	}

	after, err := secrets.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range after.Items {
		key := "/registry/secrets/" + ns + "/" + secret.Name
		if raw := e.rawValue(t, key); !bytes.HasPrefix(raw, []byte("k8s:enc:aescbc:v1:key2:")) {
			t.Errorf("%s: %q..., want it encrypted with key2", key, raw[:min(len(raw), 24)])
		}
		want := "0"
		if secret.Name >= fmt.Sprintf("s%02d", busy) {
			want = "3" // the server's last update, not lost
		}
		if got := string(secret.Data["n"]); got != want {
			t.Errorf("%s: n=%s through the server, want %s", secret.Name, got, want)
		}
		if secret.Name < fmt.Sprintf("s%02d", busy) && !reflect.DeepEqual(secret.ManagedFields, managedBefore[secret.Name]) {
			t.Errorf("%s: managedFields %+v, want them as they were %+v (as the server's migration of s00 left them)", secret.Name, secret.ManagedFields, managedBefore[secret.Name])
		}
	}

	// One MODIFIED event for each secret nobody else wrote.
	modified := map[string]int{}
	for deadline := time.After(10 * time.Second); len(modified) < count; {
		select {
		case ev := <-w.ResultChan():
			if ev.Type == watch.Modified {
				modified[ev.Object.(*corev1.Secret).Name]++
			}
		case <-deadline:
			t.Fatalf("watch saw MODIFIED for %d secrets, want %d: %v", len(modified), count, modified)
		}
	}
	for i := range busy {
		if name := fmt.Sprintf("s%02d", i); modified[name] != 1 {
			t.Errorf("%s: %d MODIFIED events, want 1", name, modified[name])
		}
	}

	// The server's watch cache serves what regctl wrote.
	cached, err := secrets.List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range cached.Items {
		resp, err := e.client.Get(ctx, "/registry/secrets/"+ns+"/"+secret.Name)
		if err != nil {
			t.Fatal(err)
		}
		if rv := fmt.Sprint(resp.Kvs[0].ModRevision); secret.ResourceVersion != rv {
			t.Errorf("%s: the watch cache serves resourceVersion %s, etcd holds %s", secret.Name, secret.ResourceVersion, rv)
		}
	}
	mustRun(t, "scan", "--only", "encryption", "--fail-on", "encryption", etcdFlag, rotated)
	if again, code := migrateReport(t, "--encryption", etcdFlag, rotated); code != 0 || len(again.Resources) != 0 {
		t.Errorf("a second migration: exit %d, %+v; want nothing left", code, again)
	}
}

// TestMigrateStopsBetweenObjects interrupts a migration and holds it to
// its report: exactly the values it says it rewrote are rewritten, values
// its key cannot read are listed and never touched, and the next run does
// the rest. A dry run writes nothing.
func TestMigrateStopsBetweenObjects(t *testing.T) {
	t.Parallel()
	e := newLiveEtcd(t)
	var manifest strings.Builder
	manifest.WriteString("apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n")
	const count = 40
	for i := range count {
		fmt.Fprintf(&manifest, "---\napiVersion: v1\nkind: Secret\nmetadata: {name: s%02d, namespace: shop}\nstringData: {n: \"%d\"}\n", i, i)
	}
	mustRun(t, "create", "-f", manifestFile(t, manifest.String()), e.flag())
	enc := encryptionFlag(t, "enc.yaml", map[string]string{"secrets": aescbc("key1") + identityProvider})
	mustRun(t, "create", "-f", manifestFile(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: other}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: ok, namespace: other}\nstringData: {n: \"1\"}\n"), e.flag(), enc)
	const broken = "/registry/secrets/shop/zz-broken"
	// Encrypted with the config's own key, which decrypts another secret,
	// but not a value it reads: the value's fault, not the flags'.
	if _, err := e.client.Put(context.Background(), broken, "k8s:enc:aescbc:v1:key1:not a value the key reads"); err != nil {
		t.Fatal(err)
	}

	rev := e.revision(t)
	dry, code := migrateReport(t, "--dry-run", e.flag(), enc)
	if code != 1 || resourceReport(dry, "secrets").Selected != count || len(dry.Unreadable) != 1 || dry.Unreadable[0].Key != broken || e.revision(t) != rev {
		t.Errorf("dry run: exit %d, %+v, revision %d→%d; want %d plain secrets chosen, the broken one listed, exit 1, nothing written", code, dry, rev, e.revision(t), count)
	}

	encrypted := func() int64 {
		resp, err := e.client.Get(context.Background(), "/registry/secrets/shop/", clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, kv := range resp.Kvs {
			if bytes.HasPrefix(kv.Value, []byte("k8s:enc:aescbc:v1:key1:")) && string(kv.Key) != broken {
				n++
			}
		}
		return n
	}
	cmd, stdout, stderr := startBinary(t, regctlBinary(t), "migrate", "-o", "json", "--qps=10", e.flag(), enc)
	// Interrupt once the first secret is rewritten, not after a fixed time:
	// a loaded machine may still be opening the session after seconds.
	for deadline := time.Now().Add(30 * time.Second); encrypted() == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("migrate rewrote nothing in 30s: %s", stderr)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(stdout)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("interrupted migrate exited %d, want %d: %s", code, exitInterrupted, stderr)
	}
	report := &migrate.Report{}
	if err := json.Unmarshal(out, report); err != nil {
		t.Fatalf("the interrupted migration's report: %v: %s", err, out)
	}
	done := resourceReport(report, "secrets").Rewritten
	if !report.Interrupted || done == 0 || done >= count || encrypted() != done {
		t.Errorf("interrupted: %+v; %d encrypted in etcd; want the %d rewritten before the interrupt, and no more", report, encrypted(), done)
	}

	rest, code := migrateReport(t, e.flag(), enc)
	if code != 1 || resourceReport(rest, "secrets").Rewritten != count-done || encrypted() != count || len(rest.Unreadable) != 1 {
		t.Errorf("the second run: exit %d, %+v; want the %d left rewritten, the broken one listed, exit 1", code, rest, count-done)
	}
	if raw := e.rawValue(t, broken); string(raw) != "k8s:enc:aescbc:v1:key1:not a value the key reads" {
		t.Errorf("the unreadable value was touched: %q", raw)
	}
}

// gadgetsCRD serves v1beta1 and v1 and stores v1beta1; the test moves its
// storage to v1.
const gadgetsCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
  versions:
  - name: v1beta1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {size: {type: integer}}}}}}
  - name: v1
    served: true
    storage: false
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {size: {type: integer}}}}}}
`

// TestMigrateMovesACustomResourceToItsStorageVersion moves a CRD's
// storage from v1beta1 to v1, as one does before dropping v1beta1: regctl
// rewrites the objects stored at v1beta1, which the server then reads the
// same, and drops v1beta1 from the CRD's status.storedVersions, as the
// server's migration runner does. A dry run says so and writes nothing.
func TestMigrateMovesACustomResourceToItsStorageVersion(t *testing.T) {
	t.Parallel()
	s := apiserver.Start(t)
	client := etcdClient(t, s.EtcdURL)
	e := &liveEtcd{url: s.EtcdURL, client: client}
	ctx := context.Background()
	crd := apiserver.CreateCRD(t, s, gadgetsCRD)
	gadgets := s.Dynamic.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}).Namespace("default")
	create := func(name string) {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": name}, "spec": map[string]any{"size": int64(len(name))}}}
		if _, err := gadgets.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"a", "bb", "ccc"} {
		create(name)
	}
	beforeSnapshot := saveSnapshot(t, client)
	crd.Spec.Versions[0].Storage, crd.Spec.Versions[1].Storage = false, true
	crds, err := apiextensionsclient.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := crds.ApiextensionsV1().CustomResourceDefinitions().Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The CRD handler serves the new storage version once it has seen the
	// change: a gadget created then is stored at v1.
	old := int64(3)
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		name := fmt.Sprintf("d%d", time.Now().UnixNano())
		create(name)
		atV1 := bytes.HasPrefix(e.rawValue(t, "/registry/example.com/gadgets/default/"+name), []byte(`{"apiVersion":"example.com/v1",`))
		if !atV1 {
			old++
		}
		return atV1, nil
	})
	if err != nil {
		t.Fatalf("waiting for gadgets to be stored at v1: %v", err)
	}
	storedVersions := func() []string {
		got, err := crds.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got.Status.StoredVersions
	}
	if got := storedVersions(); !slices.Equal(got, []string{"v1beta1", "v1"}) {
		t.Fatalf("status.storedVersions %v before the migration, want [v1beta1 v1]", got)
	}
	before, err := gadgets.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}

	rev := e.revision(t)
	dry, code := migrateReport(t, "gadgets.example.com", "--dry-run", e.flag())
	res := resourceReport(dry, "gadgets.example.com")
	if code != 0 || res.Selected != old || res.Reasons["old-version"] != old || len(dry.StoredVersions) != 1 || !slices.Equal(dry.StoredVersions[0].After, []string{"v1"}) || e.revision(t) != rev {
		t.Errorf("dry run: exit %d, %+v; want the %d gadgets at v1beta1 chosen, storedVersions to become [v1], nothing written", code, dry, old)
	}

	report, code := migrateReport(t, "gadgets.example.com", "--versions", "--keep-stored-versions", e.flag())
	if res := resourceReport(report, "gadgets.example.com"); code != 0 || res.Rewritten != old || len(report.StoredVersions) != 0 {
		t.Fatalf("migrate: exit %d, %+v; want the %d gadgets rewritten, and storedVersions kept", code, report, old)
	}
	if got := storedVersions(); !slices.Equal(got, []string{"v1beta1", "v1"}) {
		t.Errorf("status.storedVersions %v after a migration that keeps them, want [v1beta1 v1]", got)
	}
	// Scoped to a namespace, a migration leaves storedVersions alone
	// while a gadget lies in another: its version was not read.
	elsewhere := "/registry/example.com/gadgets/other/a"
	moved := bytes.Replace(e.rawValue(t, "/registry/example.com/gadgets/default/a"), []byte(`"namespace":"default"`), []byte(`"namespace":"other"`), 1)
	if _, err := client.Put(ctx, elsewhere, string(moved)); err != nil {
		t.Fatal(err)
	}
	report, code = migrateReport(t, "gadgets.example.com", "-n", "default", "--versions", e.flag())
	if code != 0 || len(report.StoredVersions) != 1 || report.StoredVersions[0].Kept != "1 of its objects lie outside the namespace migrated: migrate them all (no -n) to drop versions" {
		t.Errorf("migrate -n default with a gadget in another namespace: exit %d, %+v; want storedVersions kept", code, report)
	}
	if _, err := client.Delete(ctx, elsewhere); err != nil {
		t.Fatal(err)
	}
	// With every gadget at v1 already, a migration has nothing to rewrite,
	// and drops v1beta1: scoped to the namespace that holds every gadget,
	// as well as unscoped.
	report, code = migrateReport(t, "gadgets.example.com", "-n", "default", "--versions", e.flag())
	if code != 0 || len(report.Resources) != 0 || len(report.StoredVersions) != 1 || report.StoredVersions[0].Kept != "" {
		t.Errorf("migrate again: exit %d, %+v; want nothing rewritten and v1beta1 dropped", code, report)
	}
	if got := storedVersions(); !slices.Equal(got, []string{"v1"}) {
		t.Errorf("status.storedVersions %v after the migration, want [v1]", got)
	}
	for _, name := range []string{"a", "bb", "ccc"} {
		if raw := e.rawValue(t, "/registry/example.com/gadgets/default/"+name); !bytes.HasPrefix(raw, []byte(`{"apiVersion":"example.com/v1",`)) {
			t.Errorf("%s is stored as %s, want example.com/v1", name, raw)
		}
	}
	after, err := gadgets.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, item := range after.Items {
		want := before.Items[i]
		if item.GetName() != want.GetName() || !reflect.DeepEqual(item.Object["spec"], want.Object["spec"]) || !reflect.DeepEqual(item.GetManagedFields(), want.GetManagedFields()) || item.GetGeneration() != want.GetGeneration() {
			t.Errorf("%s reads otherwise through the server after the migration:\n%v\nwant\n%v", item.GetName(), item.Object, want.Object)
		}
	}
	mustRun(t, "scan", "--only", "versions", "--fail-on", "versions", e.flag())

	// A diff of snapshots from before and after says the storage version
	// changed, and finds the rewritten gadgets the same as served.
	afterSnapshot := saveSnapshot(t, client)
	diff, _ := changesReport(t, "--from", beforeSnapshot, "--to", afterSnapshot, "gadgets.example.com")
	if len(diff.Resources) != 1 || diff.Resources[0].Storage != "storage version example.com/v1beta1, then example.com/v1" || diff.Resources[0].Unchanged != 3 || diff.Resources[0].Added != old-3+1 {
		t.Errorf("diff across the storage version change: %+v; want it said, the 3 gadgets unchanged and the %d created since added", diff.Resources, old-3+1)
	}
}

// TestMigrateInASandbox encrypts what a sandbox holds in plain text once
// an encryption config is given, with no server and no etcd but regctl's.
func TestMigrateInASandbox(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	manifest := "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: shop}\nstringData: {password: hunter2}\n"
	mustRun(t, "create", "-f", manifestFile(t, manifest), "--data-dir", dir)
	enc := encryptionFlag(t, "enc.yaml", map[string]string{"secrets": aescbc("key1") + identityProvider})
	report, code := migrateReport(t, "--data-dir", dir, enc)
	if res := resourceReport(report, "secrets"); code != 0 || res.Reasons["plaintext"] != 1 || res.Rewritten != 1 {
		t.Fatalf("migrate: exit %d, %+v; want the plain secret rewritten", code, report)
	}
	mustRun(t, "scan", "--only", "encryption", "--fail-on", "encryption", "--data-dir", dir, enc)
	if got := mustRun(t, "get", "secret", "db", "-n", "shop", "-o", "jsonpath={.data.password}", "--data-dir", dir, enc); got != "aHVudGVyMg==" {
		t.Errorf("the secret reads %q after the migration", got)
	}
}

// TestMigrateRewritesKMSv2ValuesOfAnOldKeyID rotates a KMS v2 plugin's key:
// values written under the key ID the plugin no longer reports current are
// rewritten under the new one, and the server reads them.
func TestMigrateRewritesKMSv2ValuesOfAnOldKeyID(t *testing.T) {
	t.Parallel()
	dir := socketDir(t)
	socket := filepath.Join(dir, "kms.sock")
	plugin := kmsv2mock.NewBase64Plugin(t, socket)
	enc := "--encryption-provider-config=" + kmsv2Config(t, dir, socket, "3s")
	s := apiserver.Start(t, enc)
	etcdFlag := "--etcd-servers=" + s.EtcdURL
	ctx := context.Background()
	names := []string{"db", "api", "tls"}
	for _, name := range names {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Data: map[string][]byte{"token": []byte(name + "-secret")}}
		if _, err := s.Client.CoreV1().Secrets("default").Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	keyID := func(name string) string {
		var info etcdview.ValueInfo
		if err := json.Unmarshal([]byte(mustRun(t, "inspect", "secrets/"+name, "-n", "default", "-o", "json", etcdFlag, enc)), &info); err != nil {
			t.Fatal(err)
		}
		return info.KMSKeyID
	}
	plugin.UpdateKeyID()
	if err := kmsv2mock.WaitForBase64PluginToBeUpdated(plugin); err != nil {
		t.Fatal(err)
	}
	report, code := migrateReport(t, "secrets", "--encryption", etcdFlag, enc)
	if res := resourceReport(report, "secrets"); code != 0 || res.Reasons["stale-key"] != int64(len(names)) || res.Rewritten != int64(len(names)) {
		t.Fatalf("migrate: exit %d, %+v; want the %d secrets of key ID %s rewritten", code, report, len(names), mockKeyID)
	}
	for _, name := range names {
		if id := keyID(name); id == mockKeyID || id == "" {
			t.Errorf("%s is encrypted under key ID %q, want the plugin's new one", name, id)
		}
		got, err := s.Client.CoreV1().Secrets("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil || string(got.Data["token"]) != name+"-secret" {
			t.Errorf("the server reads %s as %v (%v)", name, got, err)
		}
	}
}

// TestMigrateRefusesWhatItCannotWrite: a snapshot is read-only, and a
// rewrite at a past revision means nothing; both are refused before
// anything is read.
func TestMigrateRefusesWhatItCannotWrite(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--snapshot", "backup.db"}, "backup.db is an etcd snapshot, which regctl only reads"},
		{[]string{"--revision", "5", "--etcd-servers", "http://127.0.0.1:1"}, "--revision"},
		{[]string{"--qps=-1", "--etcd-servers", "http://127.0.0.1:1"}, "--qps must not be negative"},
		{[]string{"-n", "shop", "-A", "--etcd-servers", "http://127.0.0.1:1"}, "`-n` and `-A` both given"},
	} {
		_, stderr, code := run(t, append([]string{"migrate"}, c.args...)...)
		if code != 1 || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("migrate %v: exit %d, %q; want one line saying %q", c.args, code, stderr, c.want)
		}
	}
}
