package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/features"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/regctl/regctl/test/apiserver"
)

const unsafeFlag = "--ignore-store-read-error-with-cluster-breaking-potential"

// unsafeGate turns on the gate the server needs for unsafe deletes (on by
// default since Kubernetes 1.37); unsafeGateOff turns it off.
var (
	unsafeGate    = "--feature-gates=" + string(features.AllowUnsafeMalformedObjectDeletion) + "=true"
	unsafeGateOff = "--feature-gates=" + string(features.AllowUnsafeMalformedObjectDeletion) + "=false"
)

// key2Config is an EncryptionConfiguration that encrypts secrets with
// aescbc key "key2" alone: what encryptionConfig's key1 wrote cannot be
// read with it.
func key2Config(t *testing.T) string {
	t.Helper()
	return encryptionConfigFile(t, "encryption-key2.yaml", map[string]string{"secrets": aescbc("key2")})
}

// unreadableObjects writes, on s, objects whose stored values cannot be
// read: garbage bytes and a truncated protobuf where config maps were, and
// a secret encrypted with a key the returned flags do not hold. Each is
// named by what regctl takes, the flags its reads need, and its etcd key.
func unreadableObjects(t *testing.T, s *liveEtcd) []unreadableObject {
	t.Helper()
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace+"---\n"+configMapDoc("garbage")+"---\n"+configMapDoc("truncated")), s.flag())
	secret := "apiVersion: v1\nkind: Secret\nmetadata: {name: sealed, namespace: shop}\nstringData: {password: hunter2}\n"
	mustRun(t, "create", "-f", manifestFile(t, secret), s.flag(), "--encryption-provider-config="+encryptionConfig(t))
	ctx := context.Background()
	put := func(key string, value []byte) {
		if _, err := s.client.Put(ctx, key, string(value)); err != nil {
			t.Fatal(err)
		}
	}
	put("/registry/configmaps/shop/garbage", []byte("\x00\xffnot a stored object"))
	full := s.rawValue(t, "/registry/configmaps/shop/truncated")
	if !bytes.HasPrefix(full, []byte("k8s\x00")) {
		t.Fatalf("stored config map %q: want protobuf", full)
	}
	put("/registry/configmaps/shop/truncated", full[:len(full)/2])
	return []unreadableObject{
		{"configmaps/garbage", nil, "/registry/configmaps/shop/garbage"},
		{"configmaps/truncated", nil, "/registry/configmaps/shop/truncated"},
		{"secrets/sealed", []string{"--encryption-provider-config=" + key2Config(t)}, "/registry/secrets/shop/sealed"},
	}
}

type unreadableObject struct {
	arg   string
	flags []string
	key   string
}

// TestUnsafeDeleteOfUnreadableValues runs regctl as its own process: the
// gate is process-wide, and a test server elsewhere in this binary may have
// turned it on.
func TestUnsafeDeleteOfUnreadableValues(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	objs := unreadableObjects(t, s)
	// Whether the server refuses a dry run of an unsafe delete, as its own
	// validation says (it does not since Kubernetes 1.37).
	dryRunRefused := len(metav1validation.ValidateIgnoreStoreReadError(field.NewPath("options"),
		&metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}, IgnoreStoreReadErrorWithClusterBreakingPotential: ptr.To(true)})) > 0
	runRegctl := func(o unreadableObject, extra ...string) (string, int) {
		args := append(append([]string{"delete", o.arg, "-n", "shop", s.flag()}, o.flags...), extra...)
		return runBinaryWithin(t, time.Minute, args...)
	}
	still := func(t *testing.T, o unreadableObject) {
		t.Helper()
		if s.rawValue(t, o.key) == nil {
			t.Errorf("%s was deleted", o.key)
		}
	}
	for _, o := range objs {
		t.Run(o.arg, func(t *testing.T) {
			// A delete reads the object first, and says how to delete it
			// unread.
			stderr, code := runRegctl(o)
			if code == 0 || strings.Count(stderr, o.key) != 1 || !strings.Contains(stderr, "error: reading "+o.key+": ") ||
				!strings.Contains(stderr, "deleting it unread takes `"+unsafeFlag+"`") {
				t.Errorf("delete: exit %d, stderr %q: want one error naming the key and the flags", code, stderr)
			}
			still(t, o)

			// Without the gate, the server drops the option: the same
			// failure, and a warning that the flag did nothing.
			stderr, code = runRegctl(o, unsafeFlag, unsafeGateOff)
			if code == 0 || !strings.Contains(stderr, "error: reading "+o.key+": ") ||
				!strings.Contains(stderr, "has no effect: kube-apiserver drops the option while its AllowUnsafeMalformedObjectDeletion feature gate is off") {
				t.Errorf("with the flag, gate off: exit %d, stderr %q", code, stderr)
			}
			still(t, o)

			// The server's checks of the options: not with a grace
			// period, nor (before Kubernetes 1.37) a dry run.
			bads := []struct{ flag, want string }{{"--grace-period=0", "cannot be set together with .gracePeriodSeconds"}}
			if dryRunRefused {
				bads = append(bads, struct{ flag, want string }{"--dry-run", "cannot be set together with .dryRun"})
			} else {
				stdout, stderr, code := runBinaryOutputWithin(t, time.Minute, append(append([]string{"delete", o.arg, "-n", "shop", s.flag()}, o.flags...), unsafeFlag, unsafeGate, "--dry-run")...)
				if code != 0 || !strings.HasSuffix(stdout, " deleted from shop namespace (dry run)\n") {
					t.Errorf("with --dry-run: exit %d, stdout %q, stderr %q; want the dry run's line", code, stdout, stderr)
				}
				still(t, o)
			}
			for _, bad := range bads {
				stderr, code = runRegctl(o, unsafeFlag, unsafeGate, bad.flag)
				if code == 0 || !strings.Contains(stderr, `DeleteOptions.meta.k8s.io "" is invalid: ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: `+bad.want) {
					t.Errorf("with %s: exit %d, stderr %q", bad.flag, code, stderr)
				}
				still(t, o)
			}

			start := time.Now()
			stdout, stderr, code := runBinaryOutputWithin(t, time.Minute, append(append([]string{"delete", o.arg, "-n", "shop", s.flag()}, o.flags...), unsafeFlag, unsafeGate)...)
			// Deleted unread, the object is named by its type's kind.
			kind := strings.TrimSuffix(strings.Split(o.arg, "/")[0], "s")
			if code != 0 || !strings.Contains(stderr, "warning: objects that cannot be read are deleted unread") ||
				stdout != kind+` "`+strings.Split(o.arg, "/")[1]+`" deleted from shop namespace`+"\n" {
				t.Errorf("unsafe delete: exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
			if s.rawValue(t, o.key) != nil {
				t.Errorf("%s is still in etcd after the unsafe delete", o.key)
			}
			t.Logf("unsafe delete took %s", time.Since(start))
		})
	}
}

// TestUnsafeDeleteIsForNamedObjects: the server refuses the option on a
// DELETE of a collection, which -l and --all stand for.
func TestUnsafeDeleteIsForNamedObjects(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	unreadableObjects(t, s)
	for _, sel := range [][]string{{"-l", "app=x"}, {"--all"}} {
		args := append([]string{"delete", "configmaps", "-n", "shop", s.flag(), unsafeFlag, unsafeGate}, sel...)
		stderr, code := runBinaryWithin(t, time.Minute, args...)
		if code == 0 || strings.Count(stderr, "\n") != 1 ||
			!strings.Contains(stderr, "error: deleting configmaps: DeleteOptions.meta.k8s.io \"\" is invalid: ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: is not allowed with DELETECOLLECTION") {
			t.Errorf("%v: exit %d, stderr %q", sel, code, stderr)
		}
	}
	if s.rawValue(t, "/registry/configmaps/shop/garbage") == nil {
		t.Error("a refused delete deleted")
	}
}

// TestUnsafeDeleteOfReadableObject: the store's unsafe deleter refuses an
// object it can read; without the gate the server drops the option, and
// the object is deleted as usual.
func TestUnsafeDeleteOfReadableObject(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace+"---\n"+configMapDoc("fine")), s.flag())
	const key = "/registry/configmaps/shop/fine"
	before := s.revision(t)
	stderr, code := runBinaryWithin(t, time.Minute, "delete", "configmaps/fine", "-n", "shop", s.flag(), unsafeFlag, unsafeGate)
	// The refusal is the store's, in its release's words
	// (TestUnsafeDeleteAgreesWithAPIServer holds them to the server's).
	if code == 0 || !strings.Contains(stderr, `configmaps "fine"`) || strings.Count(stderr, "error: ") != 2 {
		t.Errorf("gate on: exit %d, stderr %q", code, stderr)
	}
	if s.rawValue(t, key) == nil || s.revision(t) != before {
		t.Error("the refused unsafe delete wrote")
	}
	stdout, stderr, code := runBinaryOutputWithin(t, time.Minute, "delete", "configmaps/fine", "-n", "shop", s.flag(), unsafeFlag, unsafeGateOff)
	if code != 0 || stdout != "configmap \"fine\" deleted from shop namespace\n" || s.rawValue(t, key) != nil {
		t.Errorf("gate off: exit %d, stdout %q, stderr %q: want the object deleted as without the flag", code, stdout, stderr)
	}
}

// warningRecorder keeps the warnings a server's responses carry.
type warningRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warningRecorder) HandleWarningHeader(code int, agent, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

// TestUnsafeDeleteAgreesWithAPIServer runs a kube-apiserver with the gate
// on, on the etcd regctl writes: both fail to read a corrupt object, and
// an unsafe delete by either leaves etcd the same.
func TestUnsafeDeleteAgreesWithAPIServer(t *testing.T) {
	s := apiserver.Start(t, unsafeGate)
	ctx := context.Background()
	createNamespace(t, s, "shop")
	for _, name := range []string{"by-regctl", "by-server"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"}, Data: map[string]string{"k": "v"}}
		if _, err := s.Client.CoreV1().ConfigMaps("shop").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c := etcdClient(t, s.EtcdURL)
	for _, name := range []string{"by-regctl", "by-server"} {
		if _, err := c.Put(ctx, "/registry/configmaps/shop/"+name, "\x00\xffnot a stored object"); err != nil {
			t.Fatal(err)
		}
	}
	etcdFlag := "--etcd-servers=" + s.EtcdURL

	// Both fail to read it. The server's GET without a resourceVersion
	// reads etcd, not its watch cache.
	for _, name := range []string{"by-regctl", "by-server"} {
		_, err := s.Client.CoreV1().ConfigMaps("shop").Get(ctx, name, metav1.GetOptions{})
		if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "StorageError: corrupt object") {
			t.Errorf("server GET %s: %v: want an internal error saying the object is corrupt", name, err)
		}
		// This process's gate is the server's: regctl in-process is given
		// it too.
		_, stderr, code := run(t, "get", "configmaps/"+name, "-n", "shop", etcdFlag, unsafeGate)
		if code == 0 || !strings.Contains(stderr, "reading /registry/configmaps/shop/"+name+": ") {
			t.Errorf("regctl get %s: exit %d, %q", name, code, stderr)
		}
	}
	// Without the option, both refuse to delete it.
	if err := s.Client.CoreV1().ConfigMaps("shop").Delete(ctx, "by-server", metav1.DeleteOptions{}); !apierrors.IsInternalError(err) {
		t.Errorf("server DELETE without the option: %v: want an internal error", err)
	}
	if _, stderr, code := run(t, "delete", "configmaps/by-regctl", "-n", "shop", etcdFlag, unsafeGate); code == 0 || !strings.Contains(stderr, "deleting it unread takes") {
		t.Errorf("regctl delete without the flag: exit %d, %q", code, stderr)
	}

	stdout, stderr, code := run(t, "delete", "configmaps/by-regctl", "-n", "shop", etcdFlag, unsafeGate, unsafeFlag)
	if code != 0 || stdout != "configmap \"by-regctl\" deleted from shop namespace\n" {
		t.Fatalf("regctl unsafe delete: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if _, err := s.Client.CoreV1().ConfigMaps("shop").Get(ctx, "by-regctl", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("server GET after regctl's unsafe delete: %v: want NotFound", err)
	}

	// The server's own unsafe delete, as its admin, recording the warnings
	// it answers with.
	warnings := &warningRecorder{}
	cfg := rest.CopyConfig(s.Config)
	cfg.WarningHandler = warnings
	admin, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.CoreV1().ConfigMaps("shop").Delete(ctx, "by-server", metav1.DeleteOptions{IgnoreStoreReadErrorWithClusterBreakingPotential: ptr.To(true)}); err != nil {
		t.Fatalf("server unsafe DELETE: %v", err)
	}
	for _, name := range []string{"by-regctl", "by-server"} {
		resp, err := c.Get(ctx, "/registry/configmaps/shop/"+name)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) != 0 {
			t.Errorf("%s: still in etcd after the unsafe delete", name)
		}
	}
	// kube-apiserver 1.36 answers an unsafe delete with no warning; regctl
	// says its own. Should the server start sending one, regctl should
	// print the server's.
	if len(warnings.msgs) != 0 {
		t.Errorf("the server warned %q: regctl prints none of that", warnings.msgs)
	}
	if !strings.Contains(stderr, "warning: objects that cannot be read are deleted unread") {
		t.Errorf("regctl's stderr %q: want its warning", stderr)
	}
}
