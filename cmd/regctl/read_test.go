package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/rest"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/etcdview/embedded"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
	"github.com/regctl/regctl/internal/stores"
)

// liveEtcd is a real embedded etcd with a plain client on it.
type liveEtcd struct {
	url    string
	client *clientv3.Client
}

func newLiveEtcd(t *testing.T) *liveEtcd {
	t.Helper()
	e, err := embedded.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{e.ClientURL}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &liveEtcd{url: e.ClientURL, client: c}
}

func (s *liveEtcd) flag() string { return "--etcd-servers=" + s.url }

func (s *liveEtcd) revision(t *testing.T) int64 {
	t.Helper()
	rev, err := etcdview.Revision(context.Background(), s.client)
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

// session builds the map on this etcd, for writing fixtures through the
// server's own stores.
func (s *liveEtcd) session(t *testing.T) *storagemap.Session {
	t.Helper()
	opts := serverflags.NewOptions()
	opts.Server.Etcd.StorageConfig.Transport.ServerList = []string{s.url}
	w, err := storagemap.Open(context.Background(), storagemap.Config{Options: opts, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// createPods writes pods through the server's pod store, as a fixture.
func (s *liveEtcd) createPods(t *testing.T, ns string, n int, mutate func(i int, p *api.Pod)) {
	t.Helper()
	w := s.session(t)
	defer w.Close()
	creater := w.Map.Handles["pods"].Storage.(rest.Creater)
	ctx := stores.RequestContext(context.Background(), handle.Target{Handle: w.Map.Handles["pods"], Namespace: ns})
	for i := 0; i < n; i++ {
		p := &api.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%05d", i), Namespace: ns},
			Spec: api.PodSpec{
				Containers:                    []api.Container{{Name: "c", Image: "busybox", ImagePullPolicy: api.PullAlways, TerminationMessagePolicy: api.TerminationMessageReadFile}},
				RestartPolicy:                 api.RestartPolicyAlways,
				DNSPolicy:                     api.DNSClusterFirst,
				TerminationGracePeriodSeconds: new(int64),
				SchedulerName:                 "default-scheduler",
				SecurityContext:               &api.PodSecurityContext{},
			},
		}
		if mutate != nil {
			mutate(i, p)
		}
		if _, err := creater.Create(ctx, p, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating pod %d: %v", i, err)
		}
	}
}

func TestReadsLeaveRevisionUnchanged(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	s.createPods(t, "default", 3, nil)
	before := s.revision(t)
	for _, args := range [][]string{
		{"get", "pods"},
		{"get", "pods", "-A", "-o", "json"},
		{"get", "pods/pod-00001", "-o", "yaml"},
		{"get", "nodes"},
		{"keys"},
		{"keys", "pods", "-A"},
		{"keys", "pods/pod-00001", "--check"},
		{"inspect", "pods/pod-00002"},
	} {
		if _, stderr, code := run(t, append(args, s.flag())...); code != 0 && !strings.Contains(stderr, "No resources") {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	if after := s.revision(t); after != before {
		t.Fatalf("etcd revision moved from %d to %d: a read wrote", before, after)
	}
}

func TestGetPagesWithBoundedRequests(t *testing.T) {
	// Count in a fresh process: the prometheus registry is process-wide, and
	// collectors left by other tests' in-process kube-apiserver make
	// gathering it crawl. One process has a core, the other two.
	if os.Getenv("REGCTL_TEST_CHILD") == "" {
		for _, procs := range []string{"1", "2"} {
			cmd := exec.Command(os.Args[0], "-test.run=^TestGetPagesWithBoundedRequests$")
			cmd.Env = append(os.Environ(), "REGCTL_TEST_CHILD=1", "GOMAXPROCS="+procs)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("GOMAXPROCS=%s: %v\n%s", procs, err, out)
			}
		}
		return
	}
	s := newLiveEtcd(t)
	s.createPods(t, "default", 2000, nil)
	for _, tc := range []struct {
		chunk     string
		minRanges float64
		maxRanges float64
	}{
		// 2000 objects in pages of 500, plus a few reads of the build
		// itself, on one core or two: the revision (1), then pages of
		// 64, 128, 256, then 500 values (values may be large: the first
		// page is small), each a bounded window of the keys (see
		// etcdview.PagesAt), and a window or two that holds less than a
		// page.
		{chunk: "500", minRanges: 6, maxRanges: 14},
		{chunk: "0", minRanges: 2, maxRanges: 5},
	} {
		before := rangeRequests(t)
		stdout, stderr, code := run(t, "get", "pods", "-o", "name", "--chunk-size", tc.chunk, s.flag())
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if n := strings.Count(stdout, "\n"); n != 2000 {
			t.Fatalf("--chunk-size %s: printed %d pods, want 2000", tc.chunk, n)
		}
		if got := rangeRequests(t) - before; got < tc.minRanges || got > tc.maxRanges {
			t.Errorf("GOMAXPROCS=%s, --chunk-size %s: %v etcd range requests, want %v..%v", os.Getenv("GOMAXPROCS"), tc.chunk, got, tc.minRanges, tc.maxRanges)
		}
	}
}

// rangeRequests reads the in-process etcd's count of range requests: the
// Range and RangeStream calls it has served. (Since etcd 3.7 one RangeStream
// reads its range in chunks, so the store's count of ranges is no longer one
// per request.)
func rangeRequests(t *testing.T) float64 {
	t.Helper()
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "grpc_server_started_total" {
			continue
		}
		var n float64
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["grpc_service"] == "etcdserverpb.KV" && (labels["grpc_method"] == "Range" || labels["grpc_method"] == "RangeStream") {
				n += m.GetCounter().GetValue()
			}
		}
		return n
	}
	t.Fatal("grpc_server_started_total not found: is etcd in-process?")
	return 0
}

func TestGetBadInput(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	s.createPods(t, "default", 1, nil)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown resource", []string{"get", "podz"}, `unknown resource "podz": did you mean pods?`},
		{"namespace on cluster-scoped", []string{"get", "nodes", "-n", "kube-system"}, "nodes is cluster-scoped: drop `-n kube-system`"},
		{"all namespaces with a name", []string{"get", "pods/x", "-A"}, "`--all-namespaces` cannot be used with object names"},
		{"missing object", []string{"get", "pods/nope"}, `pods "nope" not found`},
		{"unsupported field label", []string{"get", "pods", "--field-selector", "spec.color=red"}, `field label not supported: spec.color`},
		{"bad output", []string{"get", "pods", "-o", "xml"}, "valid values are table|wide|yaml|json|name"},
		{"unknown subresource", []string{"get", "pods/pod-00000", "--subresource", "nope"}, `pods has no subresource "nope"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := run(t, append(tc.args, s.flag())...)
			if code == 0 {
				t.Fatalf("exit 0, stdout %q", stdout)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q: want one line containing %q", stderr, tc.want)
			}
		})
	}
}

func TestReadsNeedAnEtcd(t *testing.T) {
	for _, args := range [][]string{{"get", "pods"}, {"keys"}, {"keys", "pods"}, {"inspect", "pods/x"}, {"keys", "pods/x", "--check"}} {
		start := time.Now()
		_, stderr, code := run(t, args...)
		if code == 0 || !strings.Contains(stderr, "no etcd given") || !strings.Contains(stderr, "`--etcd-servers`") || !strings.Contains(stderr, "`--data-dir DIR`") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q: want one line asking for --etcd-servers or --data-dir", args, code, stderr)
		}
		if time.Since(start) > 2*time.Second {
			t.Errorf("%v: took %s, want an immediate refusal", args, time.Since(start))
		}
	}
}

func TestReadsFailFastOnUnreachableOrTLSMismatch(t *testing.T) {
	s := newLiveEtcd(t)
	https := strings.Replace(s.url, "http://", "https://", 1)
	for _, args := range [][]string{
		{"get", "pods", "--etcd-servers=http://127.0.0.1:1"},
		// A TLS client against a plain-text etcd never completes a handshake.
		{"get", "pods", "--etcd-servers=" + https},
	} {
		start := time.Now()
		_, stderr, code := run(t, append(args, "--request-timeout=1s")...)
		if code == 0 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "error: ") {
			t.Errorf("%v: exit %d, stderr %q: want one error line", args, code, stderr)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("%v: took %s, want to fail within the request timeout", args, took)
		}
	}
}

func TestUndecodableValuesAreReportedAndTheRestPrinted(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	s.createPods(t, "default", 2, nil)
	ctx := context.Background()
	if _, err := s.client.Put(ctx, "/registry/pods/default/pod-00000x", "\x00garbage"); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := run(t, "get", "pods", "-o", "name", s.flag())
	if code == 0 {
		t.Error("exit 0: want non-zero when values cannot be read")
	}
	if stdout != "pod/pod-00000\npod/pod-00001\n" {
		t.Errorf("stdout %q: want the two readable pods", stdout)
	}
	if want := "reading /registry/pods/default/pod-00000x: cannot decode the stored value"; !strings.Contains(stderr, want) {
		t.Errorf("stderr %q: want %q", stderr, want)
	}
	// A value encrypted with a key no config is given for is the flags'
	// doing, not the value's: said once, and the list stops there.
	if _, err := s.client.Put(ctx, "/registry/pods/default/pod-00001x", "k8s:enc:aescbc:v1:key1:\x01\x02\x03"); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = run(t, "get", "pods", "-o", "name", s.flag())
	if want := "error: pods are encrypted with aescbc:v1:key1 and no encryption config is given: pass the server's `--encryption-provider-config`\n"; code == 0 || !strings.HasSuffix(stderr, want) {
		t.Errorf("a list with an encrypted value: exit %d, stderr %q; want it to end with %q", code, stderr, want)
	}

	_, stderr, code = run(t, "get", "pods/pod-00001x", s.flag())
	if code == 0 || !strings.Contains(stderr, "encrypted with aescbc:v1:key1") {
		t.Errorf("get of an encrypted value: exit %d, stderr %q", code, stderr)
	}
	stdout, _, code = run(t, "inspect", "pods/pod-00001x", "-o", "json", s.flag())
	var info etcdview.ValueInfo
	if code != 0 || json.Unmarshal([]byte(stdout), &info) != nil || info.Encryption != "aescbc:v1:key1" {
		t.Errorf("inspect of an encrypted value: exit %d, %q", code, stdout)
	}
}

func TestKeysAndInspect(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	s.createPods(t, "shop", 3, nil)
	s.createPods(t, "default", 1, nil)
	ctx := context.Background()
	if _, err := s.client.Put(ctx, "/registry/ranges/serviceips", "xyz"); err != nil {
		t.Fatal(err)
	}

	stdout, _, code := run(t, "keys", "pods/web", "-n", "shop")
	if code != 0 || stdout != "/registry/pods/shop/web\n" {
		t.Errorf("keys of an object with no etcd: exit %d, %q", code, stdout)
	}
	stdout, _, _ = run(t, "keys", "nodes/n1")
	if stdout != "/registry/minions/n1\n" {
		t.Errorf("keys nodes/n1 = %q, want the minions key", stdout)
	}
	stdout, _, code = run(t, "keys", "pods", "-n", "shop", s.flag())
	if code != 0 || stdout != "/registry/pods/shop/pod-00000\n/registry/pods/shop/pod-00001\n/registry/pods/shop/pod-00002\n" {
		t.Errorf("keys pods -n shop: exit %d, %q", code, stdout)
	}
	stdout, _, _ = run(t, "keys", "pods", "-A", s.flag())
	if strings.Count(stdout, "\n") != 4 {
		t.Errorf("keys pods -A: %q, want 4 keys", stdout)
	}

	stdout, _, code = run(t, "keys", "-o", "json", s.flag())
	var usage []etcdview.Usage
	if code != 0 || json.Unmarshal([]byte(stdout), &usage) != nil {
		t.Fatalf("keys -o json: exit %d, %q", code, stdout)
	}
	byPrefix := map[string]etcdview.Usage{}
	for _, u := range usage {
		byPrefix[u.KeyPrefix] = u
	}
	if u := byPrefix["/registry/pods/"]; u.Resource != "pods" || u.Keys != 4 || u.Bytes == 0 {
		t.Errorf("pods usage = %+v, want 4 keys with bytes", u)
	}
	if u := byPrefix["/registry/ranges/"]; u.Resource != "" || u.Keys != 1 || u.Bytes != 3 {
		t.Errorf("unclaimed ranges usage = %+v, want 1 key of 3 bytes", u)
	}

	stdout, stderr, code := run(t, "keys", "pods", "pod-00001", "pods-missing", "-n", "shop", "--check", "-o", "json", s.flag())
	if code != 1 || !strings.Contains(stderr, "no such key: /registry/pods/shop/pods-missing") {
		t.Errorf("keys --check with a missing key: exit %d, stderr %q", code, stderr)
	}
	var checks []etcdview.KeyInfo
	if err := json.Unmarshal([]byte(stdout), &checks); err != nil || len(checks) != 2 || !checks[0].Exists || checks[0].ModRevision == 0 || checks[1].Exists {
		t.Errorf("keys --check output %q", stdout)
	}

	stdout, _, code = run(t, "inspect", "pods/pod-00002", "-n", "shop", "-o", "json", s.flag())
	var info etcdview.ValueInfo
	if code != 0 || json.Unmarshal([]byte(stdout), &info) != nil {
		t.Fatalf("inspect: exit %d, %q", code, stdout)
	}
	want := etcdview.ValueInfo{Key: "/registry/pods/shop/pod-00002", Encryption: "identity", Encoding: "application/vnd.kubernetes.protobuf", StoredAPIVersion: "v1", StoredKind: "Pod"}
	if info.Key != want.Key || info.Encryption != want.Encryption || info.Encoding != want.Encoding || info.StoredAPIVersion != want.StoredAPIVersion || info.StoredKind != want.StoredKind || info.Version != 1 || info.ValueSize == 0 {
		t.Errorf("inspect = %+v, want %+v", info, want)
	}
	_, stderr, code = run(t, "inspect", "pods/nope", "-n", "shop", s.flag())
	if code == 0 || !strings.Contains(stderr, `pods "nope" not found (no key /registry/pods/shop/nope)`) {
		t.Errorf("inspect missing: exit %d, %q", code, stderr)
	}
}

func TestReadCommandsComplete(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace), s.flag())
	s.createPods(t, "shop", 2, nil)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "get", "po"}, []string{"pods", "po", "podtemplates"}},
		{[]string{"__complete", "get", "pods", "-n", "shop", s.flag(), ""}, []string{"pod-00000", "pod-00001"}},
		{[]string{"__complete", "inspect", "-n", "shop", s.flag(), "pods/pod-0"}, []string{"pods/pod-00000", "pods/pod-00001"}},
		{[]string{"__complete", "get", "pods", s.flag(), "-n", ""}, []string{"shop"}},
		{[]string{"__complete", "keys", "-o", ""}, []string{"table", "yaml", "json"}},
	} {
		stdout, stderr, code := run(t, tc.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, stderr)
		}
		var got []string
		for _, line := range strings.Split(stdout, "\n") {
			if line != "" && !strings.HasPrefix(line, ":") {
				got = append(got, strings.SplitN(line, "\t", 2)[0])
			}
		}
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("%v: completions %v, want %q among them", tc.args, got, w)
			}
		}
	}
}

func TestUnreadableValueMidListIsReportedOnce(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	s.createPods(t, "default", 10, nil)
	if _, err := s.client.Put(context.Background(), "/registry/pods/default/pod-00005x", "\x00garbage"); err != nil {
		t.Fatal(err)
	}
	// Pages of 3: the bad value sits in the third page, after good pages.
	stdout, stderr, code := run(t, "get", "pods", "-o", "name", "--chunk-size", "3", s.flag())
	if code == 0 || strings.Count(stderr, "pod-00005x") != 1 {
		t.Errorf("exit %d, stderr %q: want the bad key reported once", code, stderr)
	}
	var want strings.Builder
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&want, "pod/pod-%05d\n", i)
	}
	if stdout != want.String() {
		t.Errorf("stdout %q: want every readable pod exactly once, in order", stdout)
	}
}

// metricsAPIService is metrics-server's APIService as its release manifest
// ships it: a group version the aggregator proxies to a service, present in
// most clusters.
const metricsAPIService = `apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1beta1.metrics.k8s.io
  labels:
    k8s-app: metrics-server
spec:
  group: metrics.k8s.io
  groupPriorityMinimum: 100
  insecureSkipTLSVerify: true
  service:
    name: metrics-server
    namespace: kube-system
  version: v1beta1
  versionPriority: 100
`

// TestKeysAndScanWithAProxiedAPIService reads an etcd holding an APIService
// backed by a service: its group version is a route of the map with no
// store, which every account of the keys must pass over.
func TestKeysAndScanWithAProxiedAPIService(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	mustRun(t, "create", "-f", manifestFile(t, metricsAPIService), s.flag())
	s.createPods(t, "default", 1, nil)
	snapshot := saveSnapshot(t, s.client)

	for _, data := range []string{s.flag(), "--snapshot=" + snapshot} {
		for _, format := range []string{"", "yaml", "json"} {
			args := []string{"keys", data}
			if format != "" {
				args = append(args, "-o", format)
			}
			stdout, stderr, code := run(t, args...)
			if code != 0 || !strings.Contains(stdout, "/registry/apiregistration.k8s.io/apiservices/") || !strings.Contains(stdout, "/registry/pods/") {
				t.Errorf("regctl %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, stdout, stderr)
			}
		}
		stdout, stderr, code := run(t, "scan", data)
		if code != 0 || !strings.Contains(stdout, "apiservices") {
			t.Errorf("regctl scan %s: exit %d, stdout %q, stderr %q", data, code, stdout, stderr)
		}
	}
}
