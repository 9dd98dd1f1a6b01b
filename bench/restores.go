package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/registry/rest"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/etcdview/embedded"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/logs"
	"github.com/regctl/regctl/internal/storagemap"
)

// Targets of the restore benchmark: regctl brings a namespace back from a
// snapshot this many times faster than the temporary-cluster route, within
// this peak RSS.
const (
	restoreTarget    = 10.0
	restoreRSSTarget = 250 // MiB
)

// restores measures `regctl restore --from backup.db -n shop` of a
// namespace of config maps deleted since the snapshot, beside the
// kube-apiserver that serves the etcd, next to the route without it: a
// kube-apiserver started on the snapshot's data, `kubectl get -o json`
// there, and `kubectl create -f` into the live server (after stripping
// what create refuses, untimed). The temporary cluster's etcd holds the
// snapshot's keys from the start: `etcdutl snapshot restore` is not
// counted.
func restores(dir, launcher, regctl string, n, count int, profile func([]command) error) error {
	logs.Setup(0, io.Discard)
	kubectl, apiserverTest, err := buildKubectlServer(dir)
	if err != nil {
		return err
	}
	ctx := context.Background()
	progress("starting etcd")
	e, err := embedded.Start(nil)
	if err != nil {
		return err
	}
	defer e.Close()
	w, err := openSession(ctx, e.ClientURL)
	if err != nil {
		return err
	}
	progress(fmt.Sprintf("writing %d config maps through the config map store", count))
	if err := seedNamespaces(w); err == nil {
		err = loadConfigMaps(ctx, w, e.ClientURL, count)
	}
	w.Close()
	if err != nil {
		return err
	}
	backup := filepath.Join(dir, "backup.db")
	if err := saveSnapshot(ctx, e.ClientURL, backup); err != nil {
		return err
	}
	temporary, err := embedded.Start(nil)
	if err != nil {
		return err
	}
	defer temporary.Close()
	if err := copyKeys(ctx, e.ClientURL, temporary.ClientURL); err != nil {
		return err
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{e.ClientURL}, DialTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer c.Close()
	const prefix = "/registry/configmaps/shop/"
	reset := func() error {
		_, err := c.Delete(ctx, prefix, clientv3.WithPrefix())
		return err
	}
	check := func() error {
		got, err := etcdview.Count(ctx, c, prefix)
		if err != nil {
			return err
		}
		if got != int64(count) {
			return fmt.Errorf("%d config maps stored, want %d", got, count)
		}
		return nil
	}
	_, values, err := storedSize(ctx, e.ClientURL, prefix)
	if err != nil {
		return err
	}
	fmt.Printf("a namespace of %d config maps (%.1f MiB stored), deleted since the snapshot\n\n", count, float64(values)/(1<<20))

	progress("starting the live kube-apiserver")
	liveConfig := filepath.Join(dir, "live.kubeconfig")
	stopLive, err := startAPIServer(apiserverTest, e.ClientURL, liveConfig)
	if err != nil {
		return err
	}
	defer stopLive()

	t := newTable(launcher, 60, true)
	t.header = "vs regctl"
	restore := command{
		name: "regctl restore --from backup.db -n shop", bin: regctl,
		args:  []string{"restore", "--from", backup, "-n", "shop", "--etcd-servers=" + e.ClientURL},
		reset: reset, check: check,
	}
	restored, err := t.add(restore, n, func(stats) string { return "1.00x" })
	if err != nil {
		return err
	}
	if profile != nil {
		return profile([]command{restore})
	}
	vs := func(st stats) string { return fmt.Sprintf("%.2fx", ratio(st, restored)) }

	start, stopTemporary, err := startTemporary(dir, apiserverTest, temporary.ClientURL, n)
	if err != nil {
		return err
	}
	defer stopTemporary()
	t.row("kube-apiserver on the snapshot, until it serves", start, vs(start))
	home := filepath.Join(dir, "kubectl-home")
	tempEnv := []string{"KUBECONFIG=" + filepath.Join(dir, "temporary.kubeconfig"), "HOME=" + home}
	got, err := t.add(command{
		name: "kubectl get configmaps -n shop -o json (there)", bin: kubectl, env: tempEnv,
		args: []string{"get", "configmaps", "-n", "shop", "-o", "json"}, verify: occurs(`"kind": "ConfigMap"`, count),
	}, n, vs)
	if err != nil {
		return err
	}
	manifest := filepath.Join(dir, "configmaps.json")
	if err := exportForCreate(kubectl, tempEnv, manifest); err != nil {
		return err
	}
	created, err := t.add(command{
		name: "kubectl create -f configmaps.json (live)", bin: kubectl,
		env:  []string{"KUBECONFIG=" + liveConfig, "HOME=" + home},
		args: []string{"create", "-f", manifest}, reset: reset, check: check,
	}, n, vs)
	if err != nil {
		return err
	}
	route := stats{median: start.median + got.median + created.median, min: start.min + got.min + created.min, max: start.max + got.max + created.max,
		peakRSS: max(start.peakRSS, got.peakRSS, created.peakRSS)}
	t.row("the temporary-cluster route (the three above)", route, vs(route))

	fmt.Println()
	fmt.Println("targets:")
	verdict(fmt.Sprintf("temporary-cluster route / regctl restore: %.1fx", ratio(route, restored)), fmt.Sprintf(">= %.0fx", restoreTarget), ratio(route, restored) >= restoreTarget)
	verdict(fmt.Sprintf("regctl restore: %.1f MiB peak RSS", restored.mib()), fmt.Sprintf("<= %d MiB", restoreRSSTarget), restored.mib() <= restoreRSSTarget)
	return nil
}

// loadConfigMaps writes count config maps into shop, each as the config
// map store stores it (BeforeCreate: a uid, a creation time, the
// strategy), encoded with its storage codec, many to a transaction.
func loadConfigMaps(ctx context.Context, w *storagemap.Session, etcdURL string, count int) error {
	h := w.Map.Handles["configmaps"]
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{etcdURL}, DialTimeout: 5 * time.Second, MaxCallSendMsgSize: 64 << 20})
	if err != nil {
		return err
	}
	defer c.Close()
	const batch = 500
	return inParallel(max(2, runtime.GOMAXPROCS(0)), 0, count, batch, func(first int) error {
		ops := make([]clientv3.Op, 0, batch)
		for i := first; i < min(first+batch, count); i++ {
			key, value, err := storedConfigMap(ctx, h, i)
			if err != nil {
				return err
			}
			ops = append(ops, clientv3.OpPut(key, string(value)))
		}
		_, err := c.Txn(ctx).Then(ops...).Commit()
		return err
	})
}

// storedConfigMap is config map i of shop, as its store stores it: an
// application's settings of about a kilobyte, and the fields kubectl's
// apply recorded.
func storedConfigMap(ctx context.Context, h *handle.Handle, i int) (string, []byte, error) {
	name := fmt.Sprintf("settings-%05d", i)
	cm := &api.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", Labels: map[string]string{"app": fmt.Sprintf("app-%d", i%50), "tier": "backend"}},
		Data: map[string]string{
			"application.yaml": fmt.Sprintf("server:\n  port: %d\n  threads: 32\nlogging:\n  level: info\n  format: json\ncache:\n  ttl: 300s\n  size: %d\n", 8000+i%1000, 1024*(1+i%8)),
			"features":         "checkout-v2=true\nsearch-suggestions=true\nrecommendations=false\nnew-cart=true\n",
		},
	}
	cm.UID = types.UID(fmt.Sprintf("7b3c0000-0000-4000-8000-%012d", i))
	cm.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	cm.ManagedFields = []metav1.ManagedFieldsEntry{{
		Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &cm.CreationTimestamp,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{".":{},"f:application.yaml":{},"f:features":{}},"f:metadata":{"f:labels":{".":{},"f:app":{},"f:tier":{}}}}`)},
	}}
	if err := rest.BeforeCreate(h.Store.CreateStrategy, inNamespace(ctx, "configmaps", "shop"), cm); err != nil {
		return "", nil, err
	}
	key, err := h.Key("shop", name)
	if err != nil {
		return "", nil, err
	}
	var buf bytes.Buffer
	if err := h.StorageCodec().Encode(cm, &buf); err != nil {
		return "", nil, err
	}
	return key, buf.Bytes(), nil
}

// copyKeys copies every key of the etcd at from into the one at to.
func copyKeys(ctx context.Context, from, to string) error {
	src, err := clientv3.New(clientv3.Config{Endpoints: []string{from}, DialTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := clientv3.New(clientv3.Config{Endpoints: []string{to}, DialTimeout: 5 * time.Second, MaxCallSendMsgSize: 64 << 20})
	if err != nil {
		return err
	}
	defer dst.Close()
	return etcdview.Pages(ctx, src, "/", "/", 500, false, func(kvs []*mvccpb.KeyValue) error {
		ops := make([]clientv3.Op, len(kvs))
		for i, kv := range kvs {
			ops[i] = clientv3.OpPut(string(kv.Key), string(kv.Value))
		}
		_, err := dst.Txn(ctx).Then(ops...).Commit()
		return err
	})
}

// startTemporary starts a kube-apiserver on the temporary etcd n times,
// timing each until it serves, and leaves the last one running.
func startTemporary(dir, apiserverTest, etcdURL string, n int) (stats, func(), error) {
	var samples []sample
	stop := func() {}
	for i := range n {
		progress(fmt.Sprintf("starting kube-apiserver on the snapshot's data (%d of %d)", i+1, n))
		kubeconfig := filepath.Join(dir, "temporary.kubeconfig")
		os.Remove(kubeconfig)
		start := time.Now()
		s, err := startAPIServer(apiserverTest, etcdURL, kubeconfig)
		if err != nil {
			return stats{}, nil, err
		}
		samples = append(samples, sample{wall: time.Since(start)})
		if i < n-1 {
			s()
		} else {
			stop = s
		}
	}
	return summarise(samples), stop, nil
}

// exportForCreate writes what `kubectl get -o json` prints of shop's
// config maps, without what `kubectl create` refuses or the server sets
// (resourceVersion, uid, creationTimestamp, managedFields), to path: the
// step an operator does with jq.
func exportForCreate(kubectl string, env []string, path string) error {
	cmd := exec.Command(kubectl, "get", "configmaps", "-n", "shop", "-o", "json")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("kubectl get: %w", err)
	}
	var list struct {
		APIVersion string           `json:"apiVersion"`
		Kind       string           `json:"kind"`
		Items      []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return err
	}
	list.Items = slices.DeleteFunc(list.Items, func(item map[string]any) bool {
		meta, _ := item["metadata"].(map[string]any)
		return meta["name"] == "kube-root-ca.crt"
	})
	for _, item := range list.Items {
		meta, _ := item["metadata"].(map[string]any)
		for _, f := range []string{"resourceVersion", "uid", "creationTimestamp", "managedFields"} {
			delete(meta, f)
		}
	}
	data, err := json.Marshal(list)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
