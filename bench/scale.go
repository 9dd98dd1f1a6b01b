package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/etcdview/embedded"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/logs"
	"github.com/regctl/regctl/internal/storagemap"
)

// The largest clusters' shape, as a million pods spread: namespaces, the
// values of an app label, and nodes.
const (
	scaleNamespaces = 100
	scaleApps       = 50
	scaleNodes      = 500
)

// Targets at the largest size, as ratios to etcdctl's read of the same keys.
const (
	scaleNameTarget = 2.0 // get -o name vs etcdctl get --prefix
	scaleReadTarget = 3.0 // -o json, table, selectors, scan vs the same
	scaleKeysTarget = 2.0 // keys vs etcdctl --keys-only
	scaleRSSTarget  = 250 // MiB, each command on the live etcd
	scaleSnapTarget = 350 // MiB, each command through a snapshot
	scaleGrowth     = 11.0
)

// scale loads pods into one etcd in steps (10,000, 100,000, then up to
// pods), each written as kube-apiserver's pod store writes it, and at each
// step measures regctl's lists, selectors, keys and scan next to etcdctl's
// raw read of the same keys, live and through a snapshot. It prints each
// step's table, then how each command's time grows from step to step.
func scale(dir, launcher, regctl string, n, pods int, profile func([]command) error) error {
	logs.Setup(0, io.Discard)
	progress("building etcdctl")
	etcdctl, err := buildEtcdctl(dir)
	if err != nil {
		return err
	}
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
	defer w.Close()
	if err := scaleNamespacesIn(w); err != nil {
		return err
	}

	steps := slices.DeleteFunc([]int{10_000, 100_000}, func(s int) bool { return s >= pods })
	steps = append(steps, pods)
	curve := map[string][]stats{}
	var order []string
	loaded := 0
	var last []command
	for _, step := range steps {
		progress(fmt.Sprintf("writing pods %d to %d as the pod store writes them", loaded, step))
		start := time.Now()
		if err := loadPods(ctx, w, e.ClientURL, loaded, step); err != nil {
			return err
		}
		loaded = step
		runtime.GC()
		debug.FreeOSMemory()
		snap := filepath.Join(dir, "scale.db")
		if err := saveSnapshot(ctx, e.ClientURL, snap); err != nil {
			return err
		}
		count, stored, err := storedSize(ctx, e.ClientURL, "/registry/pods/")
		if err != nil {
			return err
		}
		progress(fmt.Sprintf("wrote them in %s", time.Since(start).Round(time.Second)))
		fmt.Printf("\n%d pods in %d namespaces (%d app labels, %d nodes): %d keys, %.0f MiB of values; snapshot %s\n\n",
			step, scaleNamespaces, scaleApps, scaleNodes, count, float64(stored)/(1<<20), size(snap))

		t := newTable(launcher, 56, true)
		// One request for every value: more than etcdctl's 5s at a
		// million pods.
		etcd := "--endpoints=" + e.ClientURL
		timeout := "--command-timeout=10m"
		live := "--etcd-servers=" + e.ClientURL
		raw, err := t.add(command{
			name: "etcdctl get /registry/pods/ --prefix", bin: etcdctl,
			args:   []string{etcd, timeout, "get", "/registry/pods/", "--prefix"},
			verify: occurs("/registry/pods/", step),
		}, n, func(stats) string { return "anchor" })
		if err != nil {
			return err
		}
		rawKeys, err := t.add(command{
			name: "etcdctl get /registry/pods/ --prefix --keys-only", bin: etcdctl,
			args:   []string{etcd, timeout, "get", "/registry/pods/", "--prefix", "--keys-only"},
			verify: occurs("/registry/pods/", step),
		}, n, func(stats) string { return "anchor" })
		if err != nil {
			return err
		}
		app, node := step/scaleApps, step/scaleNodes
		commands := []scaleCommand{
			{command{name: "regctl get pods -A -o name", bin: regctl, args: []string{"get", "pods", "-A", "-o", "name", live}, verify: occurs("pod/", step)}, raw, "get"},
			{command{name: "regctl get pods -A -o json", bin: regctl, args: []string{"get", "pods", "-A", "-o", "json", live}, verify: occurs(`"kind": "Pod"`, step)}, raw, "get"},
			{command{name: "regctl get pods -A", bin: regctl, args: []string{"get", "pods", "-A", live}, verify: occurs("\n", step+1)}, raw, "get"},
			{command{name: "regctl get pods -A -l app=app-7 -o name", bin: regctl, args: []string{"get", "pods", "-A", "-l", "app=app-7", "-o", "name", live}, verify: occurs("pod/", app)}, raw, "get"},
			{command{name: "regctl get pods -A --field-selector spec.nodeName=node-7 -o name", bin: regctl, args: []string{"get", "pods", "-A", "--field-selector", "spec.nodeName=node-7", "-o", "name", live}, verify: occurs("pod/", node)}, raw, "get"},
			{command{name: "regctl keys pods -A", bin: regctl, args: []string{"keys", "pods", "-A", live}, verify: occurs("/registry/pods/", step)}, rawKeys, "keys-only"},
			{command{name: "regctl scan", bin: regctl, args: []string{"scan", live}}, raw, "get"},
			{command{name: "regctl get pods -A -o name --snapshot", bin: regctl, args: []string{"get", "pods", "-A", "-o", "name", "--snapshot", snap}, verify: occurs("pod/", step)}, raw, "get"},
			{command{name: "regctl scan --snapshot", bin: regctl, args: []string{"scan", "--snapshot", snap}}, raw, "get"},
			{command{name: "regctl keys pods -A --snapshot", bin: regctl, args: []string{"keys", "pods", "-A", "--snapshot", snap}, verify: occurs("/registry/pods/", step)}, rawKeys, "keys-only"},
		}
		last = last[:0]
		results := map[string]stats{}
		commands = slices.DeleteFunc(commands, func(m scaleCommand) bool { return !measured(m.c.name) })
		for _, m := range commands {
			st, err := t.add(m.c, n, func(st stats) string { return fmt.Sprintf("%.2fx etcdctl %s", ratio(st, m.anchor), m.label) })
			if err != nil {
				return err
			}
			if _, ok := curve[m.c.name]; !ok {
				order = append(order, m.c.name)
			}
			curve[m.c.name] = append(curve[m.c.name], st)
			results[m.c.name] = st
			last = append(last, m.c)
		}
		if step == pods && len(commands) > 0 {
			fmt.Println()
			fmt.Printf("targets at %d pods:\n", step)
			for _, m := range commands {
				st := results[m.c.name]
				target := scaleReadTarget
				switch m.c.name {
				case "regctl get pods -A -o name", "regctl get pods -A -o name --snapshot":
					target = scaleNameTarget
				case "regctl keys pods -A", "regctl keys pods -A --snapshot":
					target = scaleKeysTarget
				}
				r := ratio(st, m.anchor)
				verdict(fmt.Sprintf("%s: %.2fx etcdctl %s", m.c.name, r, m.label), fmt.Sprintf("<= %gx", target), r <= target)
				rss := float64(scaleRSSTarget)
				if slices.Contains(m.c.args, "--snapshot") {
					rss = scaleSnapTarget
				}
				verdict(fmt.Sprintf("%s: %.0f MiB peak RSS", m.c.name, st.mib()), fmt.Sprintf("<= %.0f MiB", rss), st.mib() <= rss)
			}
		}
	}

	fmt.Printf("\nmedian wall time at each size (%v pods), and its growth from one size to the next:\n", steps)
	for _, name := range order {
		line := fmt.Sprintf("%-*s", 66, name)
		for i, st := range curve[name] {
			line += fmt.Sprintf(" %10s", ms(st.median))
			if i > 0 {
				line += fmt.Sprintf(" (%.1fx)", float64(st.median)/float64(curve[name][i-1].median))
			}
		}
		fmt.Println(line)
	}
	if len(steps) == 3 && steps[1]*10 == steps[2] {
		fmt.Println()
		for _, name := range order {
			g := float64(curve[name][2].median) / float64(curve[name][1].median)
			verdict(fmt.Sprintf("%s: %.1fx from %d to %d pods", name, g, steps[1], steps[2]), fmt.Sprintf("<= %gx", scaleGrowth), g <= scaleGrowth)
		}
	}
	if profile != nil {
		return profile(last)
	}
	return nil
}

// scaleCommand is a command measured at each size, beside its anchor.
type scaleCommand struct {
	c      command
	anchor stats
	label  string
}

// scaleNamespacesIn creates ns-000 to ns-099 through the namespace store.
func scaleNamespacesIn(w *storagemap.Session) error {
	creater := w.Map.Handles["namespaces"].Storage.(rest.Creater)
	for i := range scaleNamespaces {
		ns := scaleNamespace(i)
		obj := &api.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"kubernetes.io/metadata.name": ns}}}
		if _, err := creater.Create(inNamespace(context.Background(), "namespaces", metav1.NamespaceNone), obj, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
	}
	return nil
}

func scaleNamespace(i int) string { return fmt.Sprintf("ns-%03d", i%scaleNamespaces) }

// loadPods writes pods from to to-1 as the pod store writes a pod it
// creates and a kubelet then reports running: each goes through the
// store's create strategy (rest.BeforeCreate: defaults, UID, creation
// time, validation), gets its running status as pods/status would write
// it, and is encoded with the store's storage codec, then
// put under its store key, many to a transaction. Going through the store
// for each write would take an hour at a million pods.
func loadPods(ctx context.Context, w *storagemap.Session, etcdURL string, from, to int) error {
	h := w.Map.Handles["pods"]
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{etcdURL}, DialTimeout: 5 * time.Second, MaxCallSendMsgSize: 64 << 20})
	if err != nil {
		return err
	}
	defer c.Close()
	const batch = 500
	return inParallel(max(2, runtime.GOMAXPROCS(0)), from, to, batch, func(first int) error {
		return loadBatch(ctx, h, c, first, min(first+batch, to))
	})
}

func loadBatch(ctx context.Context, h *handle.Handle, c *clientv3.Client, from, to int) error {
	ops := make([]clientv3.Op, 0, to-from)
	for i := from; i < to; i++ {
		key, value, err := storedPod(ctx, h, i)
		if err != nil {
			return err
		}
		ops = append(ops, clientv3.OpPut(key, string(value)))
	}
	if _, err := c.Txn(ctx).Then(ops...).Commit(); err != nil {
		return fmt.Errorf("writing pods %d to %d: %w", from, to-1, err)
	}
	return nil
}

// storedPod is pod i as the pod store stores it, and its key.
func storedPod(ctx context.Context, h *handle.Handle, i int) (string, []byte, error) {
	pod, status := scalePod(i)
	rctx := inNamespace(ctx, "pods", pod.Namespace)
	// What the store sets before its strategy runs, as it would: a
	// creation time and a UID (here the same at each run).
	pod.UID = types.UID(fmt.Sprintf("6a7c0000-0000-4000-8000-%012d", i))
	pod.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if err := rest.BeforeCreate(h.Store.CreateStrategy, rctx, pod); err != nil {
		return "", nil, fmt.Errorf("creating pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	pod.Status = status
	key, err := h.Key(pod.Namespace, pod.Name)
	if err != nil {
		return "", nil, err
	}
	var buf bytes.Buffer
	if err := h.StorageCodec().Encode(pod, &buf); err != nil {
		return "", nil, fmt.Errorf("encoding pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return key, buf.Bytes(), nil
}

// scalePod is pod i of a large cluster, as small as pods of one container
// are (about 750 bytes stored): its app label, node, image and IPs, with
// the status a kubelet reports once it runs, defaulted as the apiserver
// defaults what it decodes.
func scalePod(i int) (*api.Pod, api.PodStatus) {
	app := fmt.Sprintf("app-%d", i/scaleNamespaces%scaleApps)
	hash := fmt.Sprintf("%010x", 0x5d8f7c9b6a+i%scaleApps)
	started := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	ip := fmt.Sprintf("10.%d.%d.%d", 64+i/65536, i/256%256, i%256)
	image := fmt.Sprintf("registry.example.com/%s:1.%d", app, i%20)
	controller := true
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("%s-%s-%06d", app, hash, i),
			Namespace: scaleNamespace(i),
			Labels:    map[string]string{"app": app, "pod-template-hash": hash},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app + "-" + hash,
				UID: types.UID(fmt.Sprintf("6a7c0000-0000-4000-9000-%012d", i%(scaleNamespaces*scaleApps))), Controller: &controller,
			}},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: image}},
			NodeName:   fmt.Sprintf("node-%d", i%scaleNodes),
		},
		Status: corev1.PodStatus{
			Phase:     corev1.PodRunning,
			HostIP:    fmt.Sprintf("192.168.%d.%d", i%scaleNodes/250, i%scaleNodes%250),
			PodIP:     ip,
			StartTime: &started,
			QOSClass:  corev1.PodQOSBestEffort,
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "app", Image: image, ImageID: image + "@sha256:" + fmt.Sprintf("%064x", i%20),
				ContainerID: fmt.Sprintf("containerd://%064x", i), Ready: true,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
			}},
		},
	}
	legacyscheme.Scheme.Default(p)
	pod := &api.Pod{}
	if err := legacyscheme.Scheme.Convert(p, pod, nil); err != nil {
		panic(err)
	}
	status := pod.Status
	pod.Status = api.PodStatus{}
	return pod, status
}
