package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/regctl/regctl/internal/cli"
)

// count is how many keys start with prefix on an etcd.
func (s *liveEtcd) count(t *testing.T, prefix string) int64 {
	t.Helper()
	resp, err := s.client.Get(context.Background(), prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Count
}

func TestOverridesAreFollowedByEveryRead(t *testing.T) {
	t.Parallel()
	main, second := newLiveEtcd(t), newLiveEtcd(t)
	flags := []string{main.flag(), "--etcd-servers-overrides=/events#" + second.url}
	mustRun(t, append([]string{"create", "-f", manifestFile(t, shopNamespace+`---
apiVersion: v1
kind: Event
metadata: {name: ev, namespace: shop}
involvedObject: {kind: Pod, name: web, namespace: shop}
reason: Started
`)}, flags...)...)
	if n := main.count(t, "/registry/events/"); n != 0 {
		t.Fatalf("the main etcd holds %d events: the override was not followed by the write", n)
	}
	if n := second.count(t, "/registry/events/"); n != 1 {
		t.Fatalf("the events etcd holds %d events, want 1", n)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "events", "-A", "-o", "name"}, "event/ev"},
		{[]string{"keys", "events", "-A"}, "/registry/events/shop/ev"},
		{[]string{"keys", "events", "-n", "shop"}, "/registry/events/shop/ev"},
		{[]string{"keys", "events/ev", "-n", "shop", "--check"}, "true"},
		{[]string{"inspect", "events/ev", "-n", "shop"}, "/registry/events/shop/ev"},
	} {
		stdout := mustRun(t, append(tc.args, flags...)...)
		if !strings.Contains(stdout, tc.want) {
			t.Errorf("%v: stdout %q: want %q", tc.args, stdout, tc.want)
		}
		// Without the override the same read is of the main etcd alone,
		// which has no event: what was found came from the second.
		// (--check exits 1 for a missing key; inspect fails as NotFound.)
		stdout, _, code := run(t, append(tc.args, main.flag())...)
		if tc.want == "true" && code != 1 || tc.want != "true" && strings.Contains(stdout, tc.want) {
			t.Errorf("%v on the main etcd alone: exit %d, stdout %q: found what only the second holds", tc.args, code, stdout)
		}
	}
	var usage []struct {
		Resource    string   `json:"resource"`
		Keys        int64    `json:"keys"`
		EtcdServers []string `json:"etcdServers"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, append([]string{"keys", "-o", "json"}, flags...)...)), &usage); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, u := range usage {
		if u.Resource == "events" {
			found = true
			if u.Keys != 1 || len(u.EtcdServers) != 1 || u.EtcdServers[0] != second.url {
				t.Errorf("usage of events %+v: want 1 key on %s", u, second.url)
			}
		}
	}
	if !found {
		t.Errorf("keys: no usage for events in %+v", usage)
	}
	// scan reads the events on their own etcd, and the namespace on the
	// main one.
	r := scanReport(t, flags...)
	if events := resourceOf(t, r, "events", ""); events.Keys != 1 || len(events.EtcdServers) != 1 || events.EtcdServers[0] != second.url {
		t.Errorf("scan of events %+v: want 1 key on %s", events, second.url)
	}
	if namespaces := resourceOf(t, r, "namespaces", ""); namespaces.Keys != 1 || len(namespaces.EtcdServers) != 0 {
		t.Errorf("scan of namespaces %+v: want 1 key on the main etcd", namespaces)
	}
	// space reports both etcds: their members, their histories, and the
	// events on theirs.
	sp := spaceReport(t, flags...)
	if len(sp.Members) != 2 || sp.Members[0].Endpoint != main.url || sp.Members[1].Endpoint != second.url {
		t.Errorf("space's members %+v: want the main etcd's, then the events'", sp.Members)
	}
	if len(sp.History) != 2 || len(sp.History[0].EtcdServers) != 0 || !slices.Equal(sp.History[1].EtcdServers, []string{second.url}) {
		t.Errorf("space's histories %+v: want the main etcd's, then the events'", sp.History)
	}
	for _, res := range sp.Resources {
		if res.Resource == "events" && (res.Keys != 1 || !slices.Equal(res.EtcdServers, []string{second.url})) {
			t.Errorf("space's events %+v: want 1 key on %s", res, second.url)
		}
	}
}

func TestRoutesCheckTakesTheServersCommandLine(t *testing.T) {
	t.Parallel()
	s, second := newLiveEtcd(t), newLiveEtcd(t)
	if _, stderr, code := run(t, "routes", "--check", committed, s.flag()); code != 0 {
		t.Fatalf("--check with --etcd-servers: exit %d: %s", code, stderr)
	}
	stdout := mustRun(t, "routes", "-o", "json", s.flag(), "--etcd-servers-overrides=/events#"+second.url)
	var table struct {
		Routes []struct {
			Path        string   `json:"path"`
			EtcdServers []string `json:"etcdServers"`
		} `json:"routes"`
	}
	if err := json.Unmarshal([]byte(stdout), &table); err != nil {
		t.Fatal(err)
	}
	for _, r := range table.Routes {
		want := 0
		// events.k8s.io events cohabit with core events in the server's
		// storage factory: the override moves both.
		if r.Path == "events" || r.Path == "events.events.k8s.io" {
			want = 1
		}
		if len(r.EtcdServers) != want {
			t.Errorf("%s: etcdServers %v: only an overridden resource names its servers", r.Path, r.EtcdServers)
		}
	}
}

func TestRuntimeConfigIsCheckedAsTheServerDoes(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for _, tc := range []struct {
		value, want string
	}{
		// The server's words, which vary a little by release.
		{"api/all=false", "with only api/all=false"},
		{"api/all=false,apps/v1=true", "--runtime-config=api/all=false conflicts with --enable-priority-and-fairness=true"},
		{"api/ga=false", "--runtime-config=api/ga=false conflicts with --enable-priority-and-fairness=true"},
		{"apps=false", "runtime-config invalid key apps"},
		{"example.com/v1=false", "unknown api groups example.com"},
	} {
		_, stderr, code := run(t, "routes", "--runtime-config="+tc.value)
		if code == 0 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("--runtime-config=%s: exit %d, stderr %q: want one line with %q", tc.value, code, stderr, tc.want)
		}
	}
	// A failure after the ephemeral etcd started removes it too.
	if _, _, code := run(t, "routes", "--encryption-provider-config="+filepath.Join(tmp, "missing.yaml")); code == 0 {
		t.Error("a missing encryption config was accepted")
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "regctl-etcd-*")); len(left) > 0 {
		t.Errorf("ephemeral etcd data left behind: %v", left)
	}
}

func TestEventTTLMustNotBeNegative(t *testing.T) {
	t.Parallel()
	_, stderr, code := run(t, "routes", "--event-ttl=-5m")
	if code == 0 || !strings.Contains(stderr, "`--event-ttl` must be 0 or more") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// panicWriter fails the way a bug in regctl would.
type panicWriter struct{}

func (panicWriter) Write([]byte) (int, error) { panic("writer exploded") }

func TestPanicIsOneLineThatSaysItIsABug(t *testing.T) {
	t.Parallel()
	var errOut bytes.Buffer
	code := Run(context.Background(), cli.IOStreams{In: &bytes.Buffer{}, Out: panicWriter{}, ErrOut: &errOut}, []string{"version"})
	if code == 0 || strings.Count(errOut.String(), "\n") != 1 || !strings.Contains(errOut.String(), "regctl bug: writer exploded") {
		t.Errorf("exit %d, stderr %q: want one line naming the bug", code, errOut.String())
	}
}

// onFirstError runs fn when the first error line is written.
type onFirstError struct {
	bytes.Buffer
	once sync.Once
	fn   func()
}

func (w *onFirstError) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("error:")) {
		w.once.Do(w.fn)
	}
	return w.Buffer.Write(p)
}

func TestListAroundAnUnreadableValueKeepsItsRevision(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	s.createPods(t, "default", 10, nil)
	ctx := context.Background()
	if _, err := s.client.Put(ctx, "/registry/pods/default/pod-00002x", "\x00garbage"); err != nil {
		t.Fatal(err)
	}
	// While the list reports the bad value, a later pod is deleted: the list
	// was read before that, so it still holds the pod, and nothing else is
	// reported.
	errOut := &onFirstError{fn: func() {
		if _, err := s.client.Delete(ctx, "/registry/pods/default/pod-00008"); err != nil {
			t.Error(err)
		}
	}}
	var out bytes.Buffer
	code := Run(ctx, cli.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: errOut}, []string{"get", "pods", "-o", "name", "--chunk-size=2", s.flag()})
	if code == 0 || strings.Count(errOut.String(), "error:") != 2 || !strings.Contains(errOut.String(), "pod-00002x") {
		t.Errorf("exit %d, stderr %q: want the bad value and a summary, nothing else", code, errOut.String())
	}
	if n := strings.Count(out.String(), "\n"); n != 10 || !strings.Contains(out.String(), "pod/pod-00008\n") {
		t.Errorf("stdout %q: want the 10 pods of the list's revision", out.String())
	}
}

// kubeadmFlags are flags of a kubeadm control plane's kube-apiserver that
// shape nothing regctl builds.
var kubeadmFlags = []string{
	"--advertise-address=192.168.0.10", "--authorization-mode=Node,RBAC", "--client-ca-file=/etc/kubernetes/pki/ca.crt",
	"--enable-admission-plugins=NodeRestriction", "--enable-bootstrap-token-auth=true",
	"--kubelet-client-certificate=/etc/kubernetes/pki/apiserver-kubelet-client.crt",
	"--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname", "--proxy-client-cert-file=/etc/kubernetes/pki/front-proxy-client.crt",
	"--requestheader-allowed-names=front-proxy-client", "--requestheader-group-headers=X-Remote-Group", "--secure-port=6443",
	"--service-account-issuer=https://kubernetes.default.svc.cluster.local", "--service-account-key-file=/etc/kubernetes/pki/sa.pub",
	"--tls-cert-file=/etc/kubernetes/pki/apiserver.crt", "--tls-private-key-file=/etc/kubernetes/pki/apiserver.key",
}

func TestTheServersWholeCommandLineIsAccepted(t *testing.T) {
	want := mustRun(t, "routes", "-o", "yaml")
	stdout, stderr, code := run(t, append([]string{"routes", "-o", "yaml"}, kubeadmFlags...)...)
	if code != 0 || stderr != "" || stdout != want {
		t.Fatalf("routes with a kubeadm server's flags: exit %d, stderr %q; same table as without: %v", code, stderr, stdout == want)
	}
	// -v 1 says which were ignored, in one line.
	_, stderr, _ = run(t, append([]string{"routes", "-v", "1"}, kubeadmFlags...)...)
	line := "kube-apiserver flags accepted and ignored (they shape nothing regctl builds): --advertise-address --authorization-mode --client-ca-file --enable-admission-plugins"
	if !strings.Contains(stderr, line) {
		t.Errorf("-v 1 stderr lacks %q:\n%s", line, stderr)
	}
	// Help shows regctl's and the storage flags only.
	if help := mustRun(t, "routes", "--help"); strings.Contains(help, "--authorization-mode") || !strings.Contains(help, "--etcd-servers") || !strings.Contains(help, "--feature-gates") || !strings.Contains(help, "\n\nEvery other kube-apiserver flag is accepted and ignored, so a server's command line can be given as it is (-v 1 lists those given).\n") {
		t.Errorf("help lists the ignored flags, lacks the storage ones or the line that stands for the others:\n%s", help)
	}
	// Typos and bad values are errors.
	for flag, want := range map[string]string{
		"--authorisation-mode=RBAC":       "unknown flag: --authorisation-mode",
		"--feature-gates=NoSuchGate=true": "reading `--feature-gates`: unrecognized feature gate: NoSuchGate",
		"--emulated-version=1.20":         emulationRangeError("1.20"),
	} {
		if _, stderr, code := run(t, "routes", flag); code == 0 || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", flag, code, stderr, want)
		}
	}
}

// emulationRangeError is how kube-apiserver refuses an emulated version
// out of its range: three minors back from the release, up to it.
func emulationRangeError(v string) string {
	r := version.MustParse(releaseVersion)
	return fmt.Sprintf("emulation version %s is not between [%d.%d, %d.%d.0]", v, r.Major(), r.Minor()-3, r.Major(), r.Minor())
}

// TestAllowPrivilegedActsAsOnTheServer runs the binary: the server's
// privileged setting is once per process, as in kube-apiserver.
func TestAllowPrivilegedActsAsOnTheServer(t *testing.T) {
	t.Parallel()
	bin := regctlBinary(t)
	s := newLiveEtcd(t)
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace), s.flag())
	pod := manifestFile(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: priv, namespace: shop}\n"+
		"spec: {containers: [{name: c, image: busybox, securityContext: {privileged: true}}]}\n")
	out, err := exec.Command(bin, "create", "-f", pod, s.flag()).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Forbidden: disallowed by cluster policy") {
		t.Errorf("a privileged pod without --allow-privileged: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "create", "-f", pod, s.flag(), "--allow-privileged=true").CombinedOutput(); err != nil {
		t.Errorf("a privileged pod with --allow-privileged=true: %v\n%s", err, out)
	}
}

// apiserverManifest writes a kubeadm-style static Pod manifest of a
// kube-apiserver with flags, and returns its path.
func apiserverManifest(t *testing.T, flags ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Pod\nmetadata: {name: kube-apiserver, namespace: kube-system}\nspec:\n  containers:\n  - name: kube-apiserver\n    image: registry.k8s.io/kube-apiserver:" + releaseVersion + "\n    command:\n    - kube-apiserver\n")
	for _, f := range flags {
		fmt.Fprintf(&b, "    - %s\n", f)
	}
	path := filepath.Join(t.TempDir(), "kube-apiserver.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestApiserverManifestIsTheServersCommandLine(t *testing.T) {
	s := newLiveEtcd(t)
	// The node's /etc/kubernetes, copied under root.
	root := t.TempDir()
	enc := filepath.Join(root, "etc", "kubernetes", "enc", "encryption.yaml")
	if err := os.MkdirAll(filepath.Dir(enc), 0o700); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(encryptionConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(enc, data, 0o600); err != nil {
		t.Fatal(err)
	}
	storage := []string{s.flag(), "--watch-cache-sizes=secrets#0", "--runtime-config=api/all=true", "--feature-gates=AllAlpha=true,AllBeta=true", "--encryption-provider-config=/etc/kubernetes/enc/encryption.yaml"}
	manifest := apiserverManifest(t, append(storage, kubeadmFlags...)...)

	byHand := mustRun(t, "routes", "-o", "yaml", s.flag(), "--watch-cache-sizes=secrets#0", "--runtime-config=api/all=true", "--feature-gates=AllAlpha=true,AllBeta=true", "--encryption-provider-config="+enc)
	fromManifest := mustRun(t, "routes", "-o", "yaml", "--apiserver-manifest", manifest, "--manifest-root", root)
	if fromManifest != byHand {
		t.Errorf("the manifest's map differs from the same flags by hand")
	}
	if !strings.Contains(fromManifest, "encryption: aescbc:v1:key1") {
		t.Errorf("the manifest's encryption config was not read under --manifest-root")
	}
	if !strings.Contains(fromManifest, "\n  AllAlpha: true\n") || !regexp.MustCompile(`\n  path: [a-z]+\.v1alpha\d+\.`).MatchString(fromManifest) {
		t.Errorf("the manifest's feature gates do not act: no AllAlpha gate or alpha path in its table")
	}
	// A flag given to regctl wins over the manifest's.
	if out := mustRun(t, "routes", "-o", "yaml", "--apiserver-manifest", manifest, "--manifest-root", root, "--watch-cache-sizes=secrets#100"); out == fromManifest || !strings.Contains(out, "path: secrets\n") {
		t.Errorf("--watch-cache-sizes on regctl's command line did not win")
	}

	for name, tc := range map[string]struct{ manifest, want string }{
		"not a pod":            {writeFile(t, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), `it is a "ConfigMap" of "v1", not a v1 Pod`},
		"no kube-apiserver":    {writeFile(t, "etcd.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: etcd}\nspec: {containers: [{name: etcd, command: [etcd, --data-dir=/var/lib/etcd]}]}\n"), "no container of Pod etcd runs kube-apiserver"},
		"an unknown gate":      {apiserverManifest(t, "--feature-gates=NoSuchGate=true"), "unrecognized feature gate: NoSuchGate"},
		"a bad value":          {apiserverManifest(t, "--event-ttl=forever"), "the apiserver manifest"},
		"malformed":            {writeFile(t, "bad.yaml", "apiVersion: v1\nkind: Pod\nspec: {containers: [\n"), "bad.yaml"},
		"not a server flag":    {apiserverManifest(t, "--no-such-flag=1"), "sets --no-such-flag, which is not a flag of kube-apiserver " + releaseVersion},
		"missing file":         {filepath.Join(t.TempDir(), "none.yaml"), "reading the apiserver manifest: open"},
		"files not under root": {manifest, "holds no copy of the node's /etc/kubernetes/enc/encryption.yaml"},
		// The node's files, where they are on a node: not on this machine.
		"files of the node": {manifest, "open /etc/kubernetes/enc/encryption.yaml: no such file or directory: the apiserver manifest names the file as it is on its node; copy the node's files (its /etc/kubernetes as DIR/etc/kubernetes) and give `--manifest-root DIR`"},
	} {
		args := []string{"routes", "--apiserver-manifest", tc.manifest}
		if name == "files not under root" {
			args = append(args, "--manifest-root", t.TempDir())
		}
		if _, stderr, code := run(t, args...); code == 0 || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q, want one line with %q", name, code, stderr, tc.want)
		}
	}
}
