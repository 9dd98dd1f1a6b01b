package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/networking"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/stores"
	"github.com/regctl/regctl/test/apiserver"
)

func configMapDoc(name string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: shop}\ndata: {k: v}\n", name)
}

func TestCreateChecksEveryDocumentBeforeWriting(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace), s.flag())
	before := s.revision(t)
	for _, tc := range []struct {
		name, second string
		want         []string
	}{
		{"bad name", configMapDoc("Bad_Name"), []string{`document 2: ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"`}},
		{"pod without containers", "apiVersion: v1\nkind: Pod\nmetadata: {name: empty, namespace: shop}\nspec: {containers: []}\n",
			[]string{`document 2: Pod "empty" is invalid: spec.containers: Required value`}},
		{"service with no ServiceCIDR to get a cluster IP from", "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {ports: [{port: 80}]}\n",
			[]string{"document 2: " + noServiceCIDR}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := configMapDoc("first") + "---\n" + tc.second + "---\n" + configMapDoc("third")
			stdout, stderr, code := run(t, "create", "-f", manifestFile(t, m), s.flag())
			if code == 0 || stdout != "" || strings.Contains(stderr, " created\n") {
				t.Errorf("exit %d, stdout %q, stderr %q: want a refusal and nothing created", code, stdout, stderr)
			}
			for _, want := range append(tc.want, "nothing was written") {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr %q: want %q", stderr, want)
				}
			}
			if after := s.revision(t); after != before {
				t.Errorf("etcd revision moved from %d to %d", before, after)
			}
		})
	}
	// What depends on etcd is still checked as each object is written: a
	// namespace created earlier in the same manifest holds the next objects.
	m := strings.Replace(shopNamespace, "shop", "shop2", 1) + "---\n" + strings.Replace(configMapDoc("in-new"), "shop", "shop2", 1)
	if stdout, stderr, code := run(t, "create", "-f", manifestFile(t, m), s.flag()); code != 0 || !strings.Contains(stdout, "configmap/in-new created\n") {
		t.Errorf("namespace and its content in one manifest: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestReplaceChecksEveryDocumentBeforeWriting(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace+"---\n"+configMapDoc("a")+"---\n"+configMapDoc("b")+"---\n"+configMapDoc("c")), s.flag())
	var docs []string
	for _, name := range []string{"a", "b", "c"} {
		current := mustRun(t, "get", "configmaps/"+name, "-n", "shop", "-o", "yaml", s.flag())
		docs = append(docs, strings.Replace(current, "k: v", "k: edited", 1))
	}
	version := regexp.MustCompile(`(?m)^  resourceVersion: .*\n`)
	before := s.revision(t)
	for _, tc := range []struct {
		name, second, want string
	}{
		{"invalid key", strings.Replace(docs[1], "k: edited", "bad key!: edited", 1), `document 2: ConfigMap "b" is invalid: data[bad key!]: Invalid value`},
		{"stale resourceVersion", version.ReplaceAllString(docs[1], "  resourceVersion: \"2\"\n"), `document 2: Operation cannot be fulfilled on configmaps "b"`},
		{"no resourceVersion", version.ReplaceAllString(docs[1], ""), "document 2: no metadata.resourceVersion"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := docs[0] + "---\n" + tc.second + "---\n" + docs[2]
			stdout, stderr, code := run(t, "replace", "-f", manifestFile(t, m), s.flag())
			if code == 0 || stdout != "" || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "nothing was written") {
				t.Errorf("exit %d, stdout %q, stderr %q: want %q and nothing replaced", code, stdout, stderr, tc.want)
			}
			if after := s.revision(t); after != before {
				t.Errorf("etcd revision moved from %d to %d", before, after)
			}
		})
	}
	// The same three, all good, are replaced.
	if stdout, stderr, code := run(t, "replace", "-f", manifestFile(t, strings.Join(docs, "---\n")), s.flag()); code != 0 || stdout != "configmap/a replaced\nconfigmap/b replaced\nconfigmap/c replaced\n" {
		t.Errorf("a good manifest: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// noServiceCIDR is what a write that allocates or releases a cluster IP
// says on an etcd where no apiserver ever created the default ServiceCIDR.
const noServiceCIDR = "no IPv4 ServiceCIDR in etcd: the service store allocates and releases cluster IPs in ServiceCIDRs"

func TestReplaceGivingAServiceAClusterIPNeedsAServiceCIDR(t *testing.T) {
	s := newLiveEtcd(t)
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace+"---\n"+configMapDoc("cfg")+"---\napiVersion: v1\nkind: Service\nmetadata: {name: ext, namespace: shop}\nspec: {type: ExternalName, externalName: db.example.com}\n"), s.flag())
	current := mustRun(t, "get", "services/ext", "-n", "shop", "-o", "yaml", s.flag())
	edited := strings.Replace(strings.Replace(current, "type: ExternalName", "type: ClusterIP\n  ports: [{port: 80}]", 1), "externalName: db.example.com", "", 1)
	replace := manifestFile(t, configMapDoc("cfg")+"---\n"+edited)
	before := s.revision(t)
	start := time.Now()
	_, stderr, code := run(t, "replace", "-f", replace, "--force", s.flag())
	if code == 0 || strings.Count(stderr, "error: ") != 1 || !strings.Contains(stderr, "document 2: "+noServiceCIDR) || !strings.Contains(stderr, "nothing was written") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the refusal took %s, longer than the request timeout", took)
	}
	if s.revision(t) != before {
		t.Error("a refused replace wrote")
	}

	// With a ServiceCIDR, created as the advice says, the service gets an IP
	// from it.
	mustRun(t, "create", "-f", manifestFile(t, "apiVersion: networking.k8s.io/v1\nkind: ServiceCIDR\nmetadata: {name: kubernetes}\nspec: {cidrs: [10.0.0.0/24]}\n"), s.flag())
	mustRun(t, "replace", "-f", replace, "--force", s.flag())
	out := mustRun(t, "get", "services/ext", "-n", "shop", "-o", "jsonpath={.spec.clusterIP}", s.flag())
	if !strings.HasPrefix(out, "10.0.0.") || s.rawValue(t, "/registry/ipaddresses/"+out) == nil {
		t.Errorf("cluster IP %q: want one from 10.0.0.0/24, held by an IPAddress", out)
	}
}

func TestPlaintextWritesRefusedWhereValuesAreEncrypted(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	enc := "--encryption-provider-config=" + encryptionConfig(t)
	secret := func(name string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: " + name + ", namespace: shop}\nstringData: {password: hunter2}\n"
	}
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace+"---\n"+secret("db")), s.flag(), enc)
	before := s.revision(t)

	for _, args := range [][]string{
		{"create", "-f", manifestFile(t, secret("cache")), s.flag()},
		{"create", "-f", manifestFile(t, secret("cache")), "--dry-run", s.flag()},
		{"replace", "-f", manifestFile(t, secret("db")), "--force", s.flag()},
	} {
		_, stderr, code := run(t, args...)
		for _, want := range []string{
			"secrets are stored encrypted with aescbc:v1:key1", "would be written in plain text",
			"`--encryption-provider-config`", "`--allow-plaintext`", "nothing was written",
		} {
			if code == 0 || !strings.Contains(stderr, want) {
				t.Errorf("%v: exit %d, stderr %q: want %q", args[:2], code, stderr, want)
			}
		}
		if after := s.revision(t); after != before {
			t.Fatalf("%v: etcd revision moved from %d to %d", args[:2], before, after)
		}
	}

	// Other resources are not encrypted and are written as before.
	mustRun(t, "create", "-f", manifestFile(t, configMapDoc("cfg")), s.flag())
	// With the config the secret is encrypted; with --allow-plaintext it
	// is written as the user asked.
	mustRun(t, "create", "-f", manifestFile(t, secret("sealed")), s.flag(), enc)
	mustRun(t, "create", "-f", manifestFile(t, secret("cache")), "--allow-plaintext", s.flag())
	if raw := s.rawValue(t, "/registry/secrets/shop/cache"); raw == nil || bytes.HasPrefix(raw, []byte("k8s:enc:")) {
		t.Errorf("with --allow-plaintext: stored %q, want a plain value", raw[:min(len(raw), 20)])
	}
}

// putService stores a service as the apiserver would have after allocating
// its cluster IP, but with no IPAddress: through the store's storage and
// codec, past the store's allocation.
func (s *liveEtcd) putService(t *testing.T, svc *api.Service) {
	t.Helper()
	w := s.session(t)
	defer w.Close()
	store := w.Map.Handles["services"].Store
	ctx := genericapirequest.WithNamespace(genericapirequest.NewContext(), svc.Namespace)
	key, err := store.KeyFunc(ctx, svc.Name)
	if err != nil {
		t.Fatal(err)
	}
	rest.FillObjectMetaSystemFields(&svc.ObjectMeta)
	if err := store.Storage.Create(ctx, key, svc, store.NewFunc(), 0, false); err != nil {
		t.Fatal(err)
	}
}

// putServiceCIDR creates the default ServiceCIDR, as a starting apiserver
// does, through the map's store.
func (s *liveEtcd) putServiceCIDR(t *testing.T, cidr string) {
	t.Helper()
	w := s.session(t)
	defer w.Close()
	sc := &networking.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes"}, Spec: networking.ServiceCIDRSpec{CIDRs: []string{cidr}}}
	ctx := stores.RequestContext(context.Background(), handle.Target{Handle: w.Map.Handles["servicecidrs.networking.k8s.io"]})
	if _, err := w.Map.Handles["servicecidrs.networking.k8s.io"].Storage.(rest.Creater).Create(ctx, sc, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func clusterIPService(ns, name, ip string) *api.Service {
	single := api.IPFamilyPolicySingleStack
	cluster := api.ServiceInternalTrafficPolicyCluster
	return &api.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: api.ServiceSpec{
			Type: api.ServiceTypeClusterIP, ClusterIP: ip, ClusterIPs: []string{ip},
			IPFamilies: []api.IPFamily{api.IPv4Protocol}, IPFamilyPolicy: &single,
			Ports:                 []api.ServicePort{{Name: "http", Port: 80, Protocol: api.ProtocolTCP, TargetPort: intstr.FromInt32(80)}},
			Selector:              map[string]string{"app": name},
			SessionAffinity:       api.ServiceAffinityNone,
			InternalTrafficPolicy: &cluster,
		},
	}
}

// TestDeleteRefusesReleasingWithNoServiceCIDR deletes services on an etcd
// with no ServiceCIDR: a cluster IP could not be released, its IPAddress
// would stay behind, so that delete is refused; the others go through.
func TestDeleteRefusesReleasingWithNoServiceCIDR(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace+`---
apiVersion: v1
kind: Service
metadata: {name: headless, namespace: shop}
spec: {clusterIP: None, ports: [{port: 80}], selector: {app: web}}
---
apiVersion: v1
kind: Service
metadata: {name: ext, namespace: shop}
spec: {type: ExternalName, externalName: db.example.com}
---
apiVersion: v1
kind: Endpoints
metadata: {name: web, namespace: shop}
subsets: [{addresses: [{ip: 10.1.0.5}], ports: [{port: 80}]}]
`), s.flag())
	s.putService(t, clusterIPService("shop", "web", "10.0.0.10"))
	const webKey, endpointsKey = "/registry/services/specs/shop/web", "/registry/services/endpoints/shop/web"

	before := s.revision(t)
	stdout, stderr, code := run(t, "delete", "services/web", "-n", "shop", s.flag())
	if code != 1 || !strings.Contains(stderr, "\nerror: "+noServiceCIDR) || stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr %q: want %q", code, stdout, stderr, noServiceCIDR)
	}
	// A dry run releases nothing, and needs no ServiceCIDR.
	if stdout, stderr, code := run(t, "delete", "services/web", "--dry-run", "-n", "shop", s.flag()); code != 0 || stdout != "service \"web\" deleted from shop namespace (dry run)\n" {
		t.Errorf("--dry-run: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if s.revision(t) != before {
		t.Fatal("a refused delete wrote")
	}

	// With --all the others are deleted, the one with a cluster IP refused.
	stdout, stderr, code = run(t, "delete", "services", "--all", "-n", "shop", s.flag())
	if stdout != "service \"ext\" deleted from shop namespace\nservice \"headless\" deleted from shop namespace\n" {
		t.Errorf("delete --all: stdout %q: want the two deleted", stdout)
	}
	for _, w := range []string{noServiceCIDR, "1 of 3 objects were not deleted"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("delete --all: stderr %q: want %q", stderr, w)
		}
	}
	if code != 1 {
		t.Errorf("delete --all: exit %d, want 1", code)
	}
	if s.rawValue(t, webKey) == nil || s.rawValue(t, endpointsKey) == nil {
		t.Error("the service with a cluster IP, or its endpoints, was deleted")
	}
	if s.rawValue(t, "/registry/services/specs/shop/headless") != nil || s.rawValue(t, "/registry/services/specs/shop/ext") != nil {
		t.Error("a headless or ExternalName service was not deleted")
	}
}

func TestDeletePrintsTheDeletedObjects(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	labelled := func(name string) string {
		return strings.Replace(configMapDoc(name), "namespace: shop}", "namespace: shop, labels: {tier: cache}}", 1)
	}
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace+"---\n"+configMapDoc("a")+"---\n"+configMapDoc("b")+"---\n"+labelled("c")+"---\n"+labelled("d")), s.flag())

	if out := mustRun(t, "delete", "configmaps/a", "-n", "shop", "-o", "name", s.flag()); out != "configmap/a\n" {
		t.Errorf("-o name: %q, want %q", out, "configmap/a\n")
	}
	var cm corev1.ConfigMap
	out := mustRun(t, "delete", "configmaps/b", "-n", "shop", "-o", "json", s.flag())
	if err := json.Unmarshal([]byte(out), &cm); err != nil || cm.Kind != "ConfigMap" || cm.Name != "b" || cm.Data["k"] != "v" || cm.UID == "" {
		t.Errorf("-o json: %q (%v): want the deleted config map", out, err)
	}
	out = mustRun(t, "delete", "configmaps", "-l", "tier=cache", "-n", "shop", "-o", "yaml", s.flag())
	for _, want := range []string{"kind: List", "name: c", "name: d", "tier: cache", "kind: ConfigMap"} {
		if !strings.Contains(out, want) {
			t.Errorf("-l -o yaml: %q: want %q", out, want)
		}
	}
	// A namespace's store returns it, marked for deletion.
	if out := mustRun(t, "delete", "namespaces/shop", "-o", "yaml", s.flag()); !strings.Contains(out, "phase: Terminating") || !strings.Contains(out, "deletionTimestamp:") {
		t.Errorf("namespace -o yaml: %q: want it as it remains, terminating", out)
	}
}

// cancelOnLine is a stdout that cancels the command once a line says
// something was written, as a Ctrl-C at that moment would.
type cancelOnLine struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	cancel context.CancelFunc
}

func (c *cancelOnLine) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if bytes.Contains(p, []byte(c.marker)) {
		c.cancel()
	}
	return c.buf.Write(p)
}

func (c *cancelOnLine) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

var interruptedSummary = regexp.MustCompile(`error: interrupted: (\d+) created(?:, (\d+) not created)?(?:, (\d+) may have been written)?(?:, (\d+) not attempted)?\n`)

func TestInterruptedCreateStopsAndReports(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace), s.flag())
	const n = 200
	var m strings.Builder
	for i := range n {
		fmt.Fprintf(&m, "%s---\n", configMapDoc(fmt.Sprintf("cm-%03d", i)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &cancelOnLine{marker: " created", cancel: cancel}
	var errOut bytes.Buffer
	code := Run(ctx, cli.IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: &errOut}, []string{"create", "-f", manifestFile(t, m.String()), s.flag()})
	stdout, stderr := out.String(), errOut.String()
	sum := interruptedSummary.FindStringSubmatch(stderr)
	if code == 0 || sum == nil {
		t.Fatalf("exit %d, stderr %q: want an interrupted summary", code, stderr)
	}
	t.Log(strings.TrimSpace(sum[0]))
	counts := make([]int, 4)
	for i := range counts {
		counts[i], _ = strconv.Atoi(sum[i+1])
	}
	if counts[0] == 0 || counts[3] == 0 || counts[0]+counts[1]+counts[2]+counts[3] != n {
		t.Errorf("summary %q: want some created, some not attempted, %d in all", sum[0], n)
	}
	stored := 0
	for i := range n {
		name := fmt.Sprintf("cm-%03d", i)
		exists := s.rawValue(t, "/registry/configmaps/shop/"+name) != nil
		if exists {
			stored++
		}
		created := strings.Contains(stdout, "configmap/"+name+" created\n")
		mentioned := strings.Contains(stderr, "(configmap/"+name+")")
		switch {
		case created && !exists:
			t.Errorf("%s reported created, not in etcd", name)
		case !created && !mentioned && exists:
			t.Errorf("%s not attempted, yet in etcd", name)
		}
	}
	if got := strings.Count(stdout, " created\n"); got != counts[0] {
		t.Errorf("%d objects reported created, summary says %d", got, counts[0])
	}

	// A delete stops at the next object, too.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	out = &cancelOnLine{marker: " deleted", cancel: cancel}
	errOut.Reset()
	code = Run(ctx, cli.IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: &errOut}, []string{"delete", "configmaps", "--all", "-n", "shop", s.flag()})
	want := fmt.Sprintf("error: interrupted: 1 deleted, %d not attempted\n", stored-1)
	if stdout, stderr := out.String(), errOut.String(); code == 0 || !strings.Contains(stderr, want) || strings.Count(stdout, " deleted from shop namespace\n") != 1 {
		t.Errorf("delete: exit %d, stdout %q, stderr %q: want one deleted and %q", code, stdout, stderr, want)
	}
}

// --ignore-not-found passes over objects already gone, as kubectl's does,
// and still deletes and reports the others.
func TestDeleteIgnoreNotFound(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace+"---\n"+configMapDoc("a")), s.flag())

	_, stderr, code := run(t, "delete", "configmaps", "gone", "-n", "shop", s.flag())
	if code != 1 || !strings.Contains(stderr, `"gone" not found`) {
		t.Errorf("without the flag: exit %d, stderr %q: want NotFound and exit 1", code, stderr)
	}
	stdout, stderr, code := run(t, "delete", "configmaps", "gone", "a", "-n", "shop", "--ignore-not-found", "-o", "name", s.flag())
	if code != 0 || stdout != "configmap/a\n" || strings.Contains(stderr, "gone") {
		t.Errorf("exit %d, stdout %q, stderr %q: want a deleted, gone passed over", code, stdout, stderr)
	}
	if n := s.count(t, "/registry/configmaps/shop/"); n != 0 {
		t.Errorf("%d config maps left, want none", n)
	}
}

// TestPlaintextRefusedAfterEncryptionIsTurnedOn follows a cluster that
// turned encryption on: five Secrets written in plain text by a
// kube-apiserver without an encryption config, in the namespace whose keys
// come first, then one written encrypted by the same cluster's server
// restarted with an aescbc config. A Secret that regctl would write in
// plain text is refused whatever the order of the stored values, and the
// refusal names what to pass.
func TestPlaintextRefusedAfterEncryptionIsTurnedOn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := apiserver.Start(t)
	secret := func(ns, name string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, StringData: map[string]string{"password": "hunter2"}}
	}
	for _, ns := range []string{"aaa", "zzz"} {
		if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		if _, err := s.Client.CoreV1().Secrets("aaa").Create(ctx, secret("aaa", fmt.Sprintf("s%d", i)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	s.Stop()
	s = apiserver.StartOn(t, storageOn(s.EtcdURL), "--encryption-provider-config="+encryptionConfig(t))
	if _, err := s.Client.CoreV1().Secrets("zzz").Create(ctx, secret("zzz", "sealed"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	etcd := etcdClient(t, s.EtcdURL)
	if raw := rawValue(t, etcd, "/registry/secrets/zzz/sealed"); !bytes.HasPrefix(raw, []byte("k8s:enc:aescbc:v1:key1:")) {
		t.Fatalf("the server did not encrypt the secret: %q", raw[:min(len(raw), 24)])
	}
	etcdFlag := "--etcd-servers=" + s.EtcdURL
	before := revisionOf(t, etcd)
	doc := "apiVersion: v1\nkind: Secret\nmetadata: {name: new, namespace: aaa}\nstringData: {password: hunter2}\n"
	otherConfig := encryptionFlag(t, "configmaps.yaml", map[string]string{"configmaps": aescbc("key2") + identityProvider})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{etcdFlag}, "pass the apiserver's `--encryption-provider-config`"},
		{[]string{etcdFlag, otherConfig}, `the ` + "`--encryption-provider-config`" + ` given has no aescbc key "key1" for secrets`},
	} {
		args := append([]string{"create", "-f", manifestFile(t, doc)}, tc.args...)
		_, stderr, code := run(t, args...)
		if code == 0 || !strings.Contains(stderr, "secrets are stored encrypted with aescbc:v1:key1 (/registry/secrets/zzz/sealed)") || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q: want a refusal with %q", tc.args, code, stderr, tc.want)
		}
		if strings.Contains(stderr, "pass the apiserver's `--encryption-provider-config`") && len(tc.args) > 1 {
			t.Errorf("%v: asks for the encryption config that was given: %q", tc.args, stderr)
		}
	}
	if after := revisionOf(t, etcd); after != before {
		t.Fatalf("a refused write moved the etcd revision from %d to %d", before, after)
	}
	// inspect, given a config without the key, names the key it lacks.
	var info etcdview.ValueInfo
	if err := json.Unmarshal([]byte(mustRun(t, "inspect", "secrets/sealed", "-n", "zzz", "-o", "json", etcdFlag, otherConfig)), &info); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(info.Problem, `it needs that aescbc key "key1"`) {
		t.Errorf("inspect with a config that lacks the key: problem %q", info.Problem)
	}
	// With the server's config the Secret is written encrypted.
	mustRun(t, "create", "-f", manifestFile(t, doc), etcdFlag, "--encryption-provider-config="+encryptionConfig(t))
	if raw := rawValue(t, etcd, "/registry/secrets/aaa/new"); !bytes.HasPrefix(raw, []byte("k8s:enc:aescbc:v1:key1:")) {
		t.Errorf("written with the server's config: %q, want an aescbc value", raw[:min(len(raw), 24)])
	}
}

func rawValue(t *testing.T, c *clientv3.Client, key string) []byte {
	t.Helper()
	resp, err := c.Get(context.Background(), key)
	if err != nil || len(resp.Kvs) == 0 {
		t.Fatalf("reading %s: %v", key, err)
	}
	return resp.Kvs[0].Value
}

// raiseNoSpace raises etcd's NOSPACE alarm, as a member whose database
// reached --quota-backend-bytes does: etcd then refuses every write but
// deletes.
func raiseNoSpace(t *testing.T, s *liveEtcd) {
	t.Helper()
	ctx := context.Background()
	members, err := s.client.MemberList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	req := &etcdserverpb.AlarmRequest{Action: etcdserverpb.AlarmRequest_ACTIVATE, MemberID: members.Members[0].ID, Alarm: etcdserverpb.AlarmType_NOSPACE}
	if _, err := etcdserverpb.NewMaintenanceClient(s.client.ActiveConnection()).Alarm(ctx, req); err != nil {
		t.Fatal(err)
	}
	if _, err := s.client.Put(ctx, "/registry/probe", "x"); err == nil || !strings.Contains(err.Error(), "database space exceeded") {
		t.Fatalf("a write with the alarm raised: %v", err)
	}
}

// TestAnEtcdOutOfSpaceIsSaidOnce: with etcd's NOSPACE alarm raised, a
// create of many objects, a restore and a migration each say once that
// etcd is out of space and how to free it, with what was not written; a
// delete still works; a scan says the alarm is raised.
func TestAnEtcdOutOfSpaceIsSaidOnce(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	var m strings.Builder
	m.WriteString(shopNamespace)
	for i := range 20 {
		fmt.Fprintf(&m, "---\napiVersion: v1\nkind: Secret\nmetadata: {name: s-%02d, namespace: shop}\nstringData: {k: v}\n", i)
	}
	mustRun(t, "create", "-f", manifestFile(t, m.String()), s.flag())
	before := s.revision(t)
	mustRun(t, "delete", "secrets", "s-00", "s-01", "-n", "shop", s.flag())
	raiseNoSpace(t, s)

	var cms strings.Builder
	for i := range 300 {
		fmt.Fprintf(&cms, "%s---\n", configMapDoc(fmt.Sprintf("cm-%03d", i)))
	}
	space := "etcd is out of space, its NOSPACE alarm raised (etcdserver: mvcc: database space exceeded): free space by compacting its history and defragmenting each member, then disarm the alarm"
	for what, args := range map[string][]string{
		"create":  {"create", "-f", manifestFile(t, cms.String())},
		"restore": {"restore", "--from", "rev:" + strconv.FormatInt(before, 10), "secrets", "-n", "shop"},
		"migrate": {"migrate", "secrets", "--encryption", encryptionFlag(t, "enc.yaml", map[string]string{"secrets": aescbc("key1") + identityProvider})},
	} {
		stdout, stderr, code := run(t, append(args, s.flag())...)
		if code == 0 || strings.Count(stderr, "space exceeded") != 1 || !strings.Contains(stderr, space) {
			t.Errorf("%s: exit %d, stderr %q: want once that etcd is out of space\n%s", what, code, stderr, stdout)
		}
		if what == "create" && !strings.Contains(stderr, "error: 300 of 300 objects were not created: etcd is out of space") {
			t.Errorf("create: stderr %q: want how many were not created", stderr)
		}
	}
	if _, stderr, code := run(t, "delete", "secrets", "s-02", "-n", "shop", s.flag()); code != 0 {
		t.Errorf("a delete under the alarm: exit %d, %q", code, stderr)
	}
	if out := mustRun(t, "scan", "--only", "size", s.flag()); !strings.Contains(out, "\netcd alarm: NOSPACE on member ") {
		t.Errorf("the scan does not say the alarm is raised:\n%s", out)
	}
}
