package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"sigs.k8s.io/yaml"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/etcdview/embedded"
	"github.com/regctl/regctl/internal/logs"
)

// writesTarget: regctl creates the manifest at least this many times faster
// than kubectl through a kube-apiserver.
const writesTarget = 5.0

// writes measures `regctl create -f` of a manifest of pods next to
// `kubectl create -f` of the same file through a kube-apiserver on the same
// etcd, which runs in this process. Before every run the pods are removed
// with one etcd delete-range, so that each run creates into the same state.
func writes(dir, launcher, regctl string, n, pods int, profile func([]command) error) error {
	logs.Setup(0, io.Discard)
	kubectl, apiserverTest, kubectlSkipped := buildKubectlServer(dir)

	progress("starting etcd")
	e, err := embedded.Start(nil)
	if err != nil {
		return err
	}
	defer e.Close()
	ctx := context.Background()
	w, err := openSession(ctx, e.ClientURL)
	if err != nil {
		return err
	}
	err = seedNamespaces(w)
	w.Close()
	if err != nil {
		return err
	}
	manifest := filepath.Join(dir, "pods.yaml")
	size, err := writeManifest(manifest, pods)
	if err != nil {
		return err
	}
	fmt.Printf("%d pods in one manifest of %.1f MiB (%d documents), in %d namespaces\n\n", pods, float64(size)/(1<<20), pods, len(benchNamespaces))

	c, err := clientv3.New(clientv3.Config{Endpoints: []string{e.ClientURL}, DialTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer c.Close()
	reset := func() error {
		_, err := c.Delete(ctx, "/registry/pods/", clientv3.WithPrefix())
		return err
	}
	check := func() error {
		got, err := etcdview.Count(ctx, c, "/registry/pods/")
		if err != nil {
			return err
		}
		if got != int64(pods) {
			return fmt.Errorf("%d pods stored, want %d", got, pods)
		}
		return nil
	}

	t := newTable(launcher, 48, true)
	t.header = "vs regctl"
	create := command{
		name: "regctl create -f pods.yaml", bin: regctl,
		args:  []string{"create", "-f", manifest, "--etcd-servers=" + e.ClientURL},
		reset: reset, check: check,
	}
	created, err := t.add(create, n, func(stats) string { return "anchor" })
	if err != nil {
		return err
	}
	if profile != nil {
		return profile([]command{create})
	}
	var kubectlCreate stats
	if kubectlSkipped == nil && !measured("kubectl create -f pods.yaml") {
		kubectlSkipped = fmt.Errorf("-match %s", matching)
	}
	if kubectlSkipped == nil {
		kubectlCreate, kubectlSkipped = measureKubectlCreate(t, dir, apiserverTest, kubectl, e.ClientURL, manifest, n, command{reset: reset, check: check}, created)
	}

	fmt.Println()
	fmt.Println("target:")
	if kubectlSkipped != nil {
		fmt.Printf("kubectl skipped: %s\n", oneLine(kubectlSkipped))
		return nil
	}
	speedup := ratio(kubectlCreate, created)
	verdict(fmt.Sprintf("regctl create is %.1fx faster than kubectl create through kube-apiserver", speedup), fmt.Sprintf(">= %gx", writesTarget), speedup >= writesTarget)
	return nil
}

// measureKubectlCreate serves a kube-apiserver on the etcd and measures
// kubectl create -f of the manifest through it.
func measureKubectlCreate(t *table, dir, apiserverTest, kubectl, etcdURL, manifest string, n int, hooks command, anchor stats) (stats, error) {
	progress("starting kube-apiserver")
	kubeconfig := filepath.Join(dir, "kubeconfig")
	stop, err := startAPIServer(apiserverTest, etcdURL, kubeconfig)
	if err != nil {
		return stats{}, err
	}
	defer stop()
	c := hooks
	c.name, c.bin = "kubectl create -f pods.yaml", kubectl
	c.args = []string{"create", "-f", manifest}
	c.env = []string{"KUBECONFIG=" + kubeconfig, "HOME=" + filepath.Join(dir, "kubectl-home")}
	return t.add(c, n, func(st stats) string { return fmt.Sprintf("%.2fx slower", ratio(st, anchor)) })
}

// writeManifest writes n pods as one multi-document YAML stream, the pods
// a ReplicaSet would submit (no status: create resets it), and returns its
// size.
func writeManifest(path string, n int) (int, error) {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		spec, _ := benchPod(i)
		ext, err := legacyscheme.Scheme.ConvertToVersion(spec, corev1.SchemeGroupVersion)
		if err != nil {
			return 0, err
		}
		pod := ext.(*corev1.Pod)
		pod.Status = corev1.PodStatus{}
		out, err := yaml.Marshal(pod)
		if err != nil {
			return 0, err
		}
		b.WriteString("---\n")
		b.Write(out)
	}
	return b.Len(), os.WriteFile(path, b.Bytes(), 0o644)
}
