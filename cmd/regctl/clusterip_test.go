package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/regctl/regctl/internal/stores"
)

// TestReadsStartNoAllocatorInformers reads services that hold cluster IPs:
// the allocator's informers, which list and watch ServiceCIDRs and
// IPAddresses, start for writes only, so a read opens no etcd watch and
// writes nothing.
func TestReadsStartNoAllocatorInformers(t *testing.T) {
	t.Parallel()
	// Count in a fresh process: the prometheus registry is process-wide, and
	// collectors left by other tests' in-process kube-apiserver make
	// gathering it crawl.
	if os.Getenv("REGCTL_TEST_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestReadsStartNoAllocatorInformers$")
		cmd.Env = append(os.Environ(), "REGCTL_TEST_CHILD=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
	s := newLiveEtcd(t)
	s.putServiceCIDR(t, "10.0.0.0/24")
	watches := watchStreams(t)
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace+"---\napiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {ports: [{port: 80}]}\n"), s.flag())
	if watchStreams(t) == watches {
		t.Fatal("creating a service with a cluster IP opened no etcd watch: is the metric counted?")
	}

	before, watches := s.revision(t), watchStreams(t)
	for _, args := range [][]string{
		{"get", "services", "-n", "shop"},
		{"get", "services/web", "-n", "shop", "-o", "yaml"},
		{"keys"},
		{"keys", "services", "-A"},
		{"inspect", "services/web", "-n", "shop"},
	} {
		if _, stderr, code := run(t, append(args, s.flag())...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	if after := s.revision(t); after != before {
		t.Errorf("etcd revision moved from %d to %d: a read wrote", before, after)
	}
	if after := watchStreams(t); after != watches {
		t.Errorf("reads opened %v etcd watch streams, want none", after-watches)
	}
	if n := s.count(t, "/registry/ipaddresses/10.0.0."); n != 1 {
		t.Errorf("%d IPAddresses in 10.0.0.0/24, want the service's", n)
	}
}

// watchStreams is the in-process etcd's count of watch streams opened.
func watchStreams(t *testing.T) float64 {
	t.Helper()
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "grpc_server_started_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "grpc_method" && l.GetValue() == "Watch" {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatal("grpc_server_started_total{grpc_method=\"Watch\"} not found: is etcd in-process?")
	return 0
}

// TestServiceWritesSayOnlyWhatTheyDid runs the binary: creating and deleting
// a service with a cluster IP starts and stops the allocator's informers,
// whose libraries log through klog and etcd's client, and the user sees
// regctl's own lines only; with no ServiceCIDR in etcd the create fails
// within the request timeout, on one line.
func TestServiceWritesSayOnlyWhatTheyDid(t *testing.T) {
	bin := regctlBinary(t)
	s := newLiveEtcd(t)
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace), s.flag())
	svc := manifestFile(t, "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {ports: [{port: 80}]}\n")
	regctl := func(args ...string) (string, string, int) {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(bin, append(args, "--request-timeout=2s", s.flag())...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
	}

	start := time.Now()
	_, stderr, code := regctl("create", "-f", svc)
	want := "error: document 1: " + noServiceCIDR
	if code != 1 || !strings.HasPrefix(stderr, want) || !strings.HasSuffix(stderr, "ServiceCIDR: nothing was written\n") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("with no ServiceCIDR: exit %d, stderr %q: want %q and that nothing was written", code, stderr, want)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("with no ServiceCIDR the create took %s, more than `--request-timeout`", took)
	}

	s.putServiceCIDR(t, "10.0.0.0/24")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "-f", svc}, "service/web created\n"},
		{[]string{"delete", "services/web", "-n", "shop"}, "service \"web\" deleted from shop namespace\n"},
	} {
		if stdout, stderr, code := regctl(tc.args...); code != 0 || stdout != tc.want || stderr != stores.BypassWarning+"\n" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q: want %q and the warning", tc.args, code, stdout, stderr, tc.want)
		}
	}
	if n := s.count(t, "/registry/ipaddresses/"); n != 0 {
		t.Errorf("%d IPAddresses left after the delete", n)
	}
}

// TestReplaceKeepingClusterIPsNeedsNoAllocator replaces a service that keeps
// its cluster IP: as on the server, that allocates nothing, so it needs no
// ServiceCIDR and starts no informer.
func TestReplaceKeepingClusterIPsNeedsNoAllocator(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace), s.flag())
	s.putService(t, clusterIPService("shop", "web", "10.0.0.10"))
	current := mustRun(t, "get", "services/web", "-n", "shop", "-o", "yaml", s.flag())
	edited := strings.Replace(current, "    app: web\n", "    app: web-v2\n", 1)
	if edited == current {
		t.Fatalf("no selector to edit in\n%s", current)
	}
	if stdout, stderr, code := run(t, "replace", "-f", manifestFile(t, edited), s.flag()); code != 0 || stdout != "service/web replaced\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if got := mustRun(t, "get", "services/web", "-n", "shop", "-o", "jsonpath={.spec.selector.app} {.spec.clusterIP}", s.flag()); got != "web-v2 10.0.0.10" {
		t.Errorf("after the replace: %q", got)
	}
}
