package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/etcdview/embedded"
	"github.com/regctl/regctl/internal/logs"
)

// Targets of the reads benchmark: regctl's reads are held to a multiple of
// the raw etcd read of the same keys.
const (
	jsonWallTarget = 1.3 // get pods -A -o json, over etcdctl get --prefix -w json
	jsonRSSTarget  = 150 // MiB, get pods -A -o json
	keysWallTarget = 2.0 // keys pods -A, over etcdctl get --prefix --keys-only
)

// reads measures regctl's reads of every pod next to etcdctl's raw reads of
// the same keys and kubectl's reads through a kube-apiserver, all on one etcd
// running in this process.
func reads(dir, launcher, regctl string, n, pods int, profile func([]command) error) error {
	// etcd, the stores and their clients log through klog and grpc: keep
	// them quiet, as regctl does, so that stderr is the harness's progress.
	logs.Setup(0, io.Discard)
	progress("building etcdctl")
	etcdctl, err := buildEtcdctl(dir)
	if err != nil {
		return err
	}
	kubectl, apiserverTest, kubectlSkipped := buildKubectlServer(dir)

	progress("starting etcd")
	e, err := embedded.Start(nil)
	if err != nil {
		return err
	}
	defer e.Close()
	ctx := context.Background()
	progress(fmt.Sprintf("writing %d pods through the pod store", pods))
	start := time.Now()
	if err := seedPods(ctx, e.ClientURL, pods); err != nil {
		return err
	}
	// What the seeding allocated is garbage now; hand it back so that it
	// does not crowd the commands measured next.
	runtime.GC()
	debug.FreeOSMemory()
	count, size, err := storedSize(ctx, e.ClientURL, "/registry/pods/")
	if err != nil {
		return err
	}
	progress(fmt.Sprintf("wrote %d pods in %s", pods, time.Since(start).Round(time.Second)))
	fmt.Printf("%d pods in %d namespaces: %d keys under /registry/pods/, %.1f MiB of values (%d bytes per pod, protobuf)\n\n",
		pods, len(benchNamespaces), count, float64(size)/(1<<20), size/max(count, 1))

	t := newTable(launcher, 48, true)
	etcd := "--endpoints=" + e.ClientURL
	regctlEtcd := "--etcd-servers=" + e.ClientURL
	anchor := func(stats) string { return "anchor" }
	versus := func(base stats, label string) func(stats) string {
		return func(st stats) string { return fmt.Sprintf("%.2fx %s", ratio(st, base), label) }
	}

	rawJSON, err := t.add(command{
		name: "etcdctl get /registry/pods/ --prefix -w json", bin: etcdctl,
		args:   []string{etcd, "get", "/registry/pods/", "--prefix", "-w", "json"},
		verify: occurs(`"create_revision":`, pods),
	}, n, anchor)
	if err != nil {
		return err
	}
	rawKeys, err := t.add(command{
		name: "etcdctl get /registry/pods/ --prefix --keys-only", bin: etcdctl,
		args:   []string{etcd, "get", "/registry/pods/", "--prefix", "--keys-only"},
		verify: occurs("/registry/pods/", pods),
	}, n, anchor)
	if err != nil {
		return err
	}
	regctlReads := []command{
		{
			name: "regctl get pods -A -o json", bin: regctl,
			args:   []string{"get", "pods", "-A", "-o", "json", regctlEtcd},
			verify: occurs(`"kind": "Pod"`, pods),
		},
		{
			name: "regctl get pods -A", bin: regctl,
			args:   []string{"get", "pods", "-A", regctlEtcd},
			verify: occurs("\n", pods+1),
		},
		{
			name: "regctl keys pods -A", bin: regctl,
			args:   []string{"keys", "pods", "-A", regctlEtcd},
			verify: occurs("\n", pods),
		},
	}
	getJSON, err := t.add(regctlReads[0], n, versus(rawJSON, "-w json"))
	if err != nil {
		return err
	}
	if _, err := t.add(regctlReads[1], n, versus(rawJSON, "-w json")); err != nil {
		return err
	}
	keys, err := t.add(regctlReads[2], n, versus(rawKeys, "keys-only"))
	if err != nil {
		return err
	}

	if kubectlSkipped == nil {
		kubectlSkipped = measureKubectl(t, dir, apiserverTest, kubectl, e.ClientURL, n, pods, versus(rawJSON, "-w json"))
	}

	fmt.Println()
	fmt.Println("targets:")
	verdict(fmt.Sprintf("get pods -A -o json: %.2fx etcdctl -w json", ratio(getJSON, rawJSON)), fmt.Sprintf("<= %gx", jsonWallTarget), ratio(getJSON, rawJSON) <= jsonWallTarget)
	verdict(fmt.Sprintf("get pods -A -o json: %.1f MiB peak RSS", getJSON.mib()), fmt.Sprintf("<= %d MiB", jsonRSSTarget), getJSON.mib() <= jsonRSSTarget)
	verdict(fmt.Sprintf("keys pods -A: %.2fx etcdctl --keys-only", ratio(keys, rawKeys)), fmt.Sprintf("<= %gx", keysWallTarget), ratio(keys, rawKeys) <= keysWallTarget)
	if kubectlSkipped != nil {
		fmt.Printf("\nkubectl skipped: %s\n", oneLine(kubectlSkipped))
	}
	if profile != nil {
		return profile(regctlReads)
	}
	return nil
}

// buildKubectlServer builds kubectl and, because upstream's test server
// wants a testing.TB, the test binary that serves a kube-apiserver
// (reads_test.go, built with the bench tag only: `go test ./...` has no
// kube-apiserver to link for it). An error says why kubectl cannot be measured.
func buildKubectlServer(dir string) (kubectl, apiserverTest string, err error) {
	progress("building kubectl")
	if kubectl, err = buildKubectl(dir); err != nil {
		return "", "", err
	}
	progress("building the kube-apiserver test binary")
	apiserverTest = filepath.Join(dir, "bench.test")
	if err := goCmd("", "test", "-c", "-tags", buildTags("bench"), "-o", apiserverTest, "./bench").Run(); err != nil {
		return "", "", fmt.Errorf("building the kube-apiserver test binary: %w", err)
	}
	return kubectl, apiserverTest, nil
}

// measureKubectl serves a kube-apiserver on the etcd at etcdURL from the
// test binary and measures kubectl's reads through it.
func measureKubectl(t *table, dir, apiserverTest, kubectl, etcdURL string, n, pods int, vs func(stats) string) error {
	progress("starting kube-apiserver")
	kubeconfig := filepath.Join(dir, "kubeconfig")
	stop, err := startAPIServer(apiserverTest, etcdURL, kubeconfig)
	if err != nil {
		return err
	}
	defer stop()
	// HOME is where kubectl keeps its discovery cache and preferences: a
	// fresh one, filled by the warm-up run.
	env := []string{"KUBECONFIG=" + kubeconfig, "HOME=" + filepath.Join(dir, "kubectl-home")}
	for _, c := range []command{
		{name: "kubectl get pods -A", args: []string{"get", "pods", "-A"}, verify: occurs("\n", pods+1)},
		{name: "kubectl get pods -A -o json", args: []string{"get", "pods", "-A", "-o", "json"}, verify: occurs(`"kind": "Pod"`, pods)},
	} {
		c.bin, c.env = kubectl, env
		if _, err := t.add(c, n, vs); err != nil {
			return err
		}
	}
	return nil
}

// startAPIServer runs TestServeKubeAPIServer and waits for the kubeconfig it
// writes. stop closes its stdin, on which it shuts down, and waits for it.
func startAPIServer(testBin, etcdURL, kubeconfig string, flags ...string) (stop func(), err error) {
	cmd := exec.Command(testBin, "-test.run=^TestServeKubeAPIServer$", "-test.timeout=0")
	cmd.Env = append(os.Environ(), "REGCTL_BENCH=1", "REGCTL_BENCH_ETCD="+etcdURL, "REGCTL_BENCH_KUBECONFIG="+kubeconfig, "REGCTL_BENCH_APISERVER_FLAGS="+strings.Join(flags, "\n"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop = func() {
		stdin.Close()
		select {
		case <-exited:
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			<-exited
		}
	}
	deadline := time.After(3 * time.Minute)
	for {
		if _, err := os.Stat(kubeconfig); err == nil {
			return stop, nil
		}
		select {
		case err := <-exited:
			return nil, fmt.Errorf("kube-apiserver exited (%v) before serving: %s", err, lastLines(out.String(), 5))
		case <-deadline:
			stop()
			return nil, errors.New("kube-apiserver did not serve within 3 minutes")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// storedSize counts the keys under prefix and the bytes of their values.
func storedSize(ctx context.Context, etcdURL, prefix string) (keys, bytes int64, err error) {
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{etcdURL}, DialTimeout: 5 * time.Second})
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	err = etcdview.Pages(ctx, c, prefix, prefix, 1000, false, func(kvs []*mvccpb.KeyValue) error {
		for _, kv := range kvs {
			keys++
			bytes += int64(len(kv.Value))
		}
		return nil
	})
	return keys, bytes, err
}

// occurs checks that s occurs want times in a command's output.
func occurs(s string, want int) func([]byte) error {
	return func(out []byte) error {
		if got := bytes.Count(out, []byte(s)); got != want {
			return fmt.Errorf("printed %q %d times, want %d", s, got, want)
		}
		return nil
	}
}

func ratio(st, base stats) float64 { return float64(st.median) / float64(base.median) }

func verdict(measured, target string, met bool) {
	v := "missed"
	if met {
		v = "met"
	}
	fmt.Printf("  %-56s target %-10s %s\n", measured, target, v)
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}
