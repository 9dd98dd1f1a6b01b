package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/rest"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/etcdview/embedded"
	"github.com/regctl/regctl/internal/logs"
)

// Targets of the diffs benchmark: comparing two points in time costs at
// most this many times etcdctl's read of both keyspaces, within this peak
// RSS, flat in the number of pods.
const (
	diffWallTarget = 2.0
	diffRSSTarget  = 200 // MiB
	diffRSSFlat    = 1.2 // peak RSS at the full size over a tenth of it
)

// diffs writes pods, takes a snapshot, changes 1% of them (a label), takes
// another, and measures regctl diff between the two revisions of the live
// etcd and between the two snapshot files, next to etcdctl reading the
// keyspace at both revisions; at a tenth of the pods, then at all of them.
func diffs(dir, launcher, regctl string, n, pods int) error {
	logs.Setup(0, io.Discard)
	progress("building etcdctl")
	etcdctl, err := buildEtcdctl(dir)
	if err != nil {
		return err
	}
	t := newTable(launcher, 64, true)
	var figures [2]struct{ regctl, snapshots, etcdctl stats }
	for i, count := range []int{pods / 10, pods} {
		e, err := embedded.Start(nil)
		if err != nil {
			return err
		}
		from, to, fromSnap, toSnap, err := changedPods(context.Background(), dir, e.ClientURL, count)
		if err != nil {
			e.Close()
			return err
		}
		if i == 0 {
			fmt.Printf("pods in %d namespaces, 1%% of them relabelled between two snapshots\n\n", len(benchNamespaces))
		}
		endpoint := "--endpoints=" + e.ClientURL
		raw := fmt.Sprintf("%[1]s get /registry/ --prefix %[2]s --rev=%[3]d > /dev/null && %[1]s get /registry/ --prefix %[2]s --rev=%[4]d > /dev/null", etcdctl, endpoint, from, to)
		f := &figures[i]
		if f.etcdctl, err = t.add(command{name: fmt.Sprintf("etcdctl get /registry/ --prefix, at both revisions (%d pods)", count), bin: "/bin/sh", args: []string{"-c", raw}}, n, func(stats) string { return "anchor" }); err != nil {
			e.Close()
			return err
		}
		vs := func(st stats) string { return fmt.Sprintf("%.2fx", ratio(st, f.etcdctl)) }
		// A diff that finds differences exits 1; the shell makes that 0,
		// and anything else a failure of the run.
		differs := func(args string) []string {
			return []string{"-c", regctl + " diff " + args + " > /dev/null; [ $? -eq 1 ]"}
		}
		revs := fmt.Sprintf("--from rev:%d --to rev:%d --etcd-servers=%s", from, to, e.ClientURL)
		f.regctl, err = t.add(command{name: fmt.Sprintf("regctl diff --from rev:A --to rev:B (%d pods)", count), bin: "/bin/sh", args: differs(revs)}, n, vs)
		if err == nil {
			f.snapshots, err = t.add(command{name: fmt.Sprintf("regctl diff --from A.db --to B.db (%d pods)", count), bin: "/bin/sh", args: differs("--from " + fromSnap + " --to " + toSnap)}, n, vs)
		}
		e.Close()
		if err != nil {
			return err
		}
	}
	fmt.Println()
	fmt.Println("targets:")
	small, large := figures[0], figures[1]
	for _, c := range []struct {
		name string
		st   stats
		few  stats
	}{{"two revisions", large.regctl, small.regctl}, {"two snapshots", large.snapshots, small.snapshots}} {
		verdict(fmt.Sprintf("diff of %s: %.2fx etcdctl", c.name, ratio(c.st, large.etcdctl)), fmt.Sprintf("<= %gx", diffWallTarget), ratio(c.st, large.etcdctl) <= diffWallTarget)
		verdict(fmt.Sprintf("diff of %s: %.0f MiB", c.name, c.st.mib()), fmt.Sprintf("<= %d MiB", diffRSSTarget), c.st.mib() <= diffRSSTarget)
		verdict(fmt.Sprintf("diff of %s: %.2fx the RSS at a tenth", c.name, c.st.mib()/c.few.mib()), fmt.Sprintf("<= %gx", diffRSSFlat), c.st.mib() <= diffRSSFlat*c.few.mib())
	}
	return nil
}

// revisionOf is the current revision of the etcd at url.
func revisionOf(ctx context.Context, url string) (int64, error) {
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, DialTimeout: 5 * time.Second})
	if err != nil {
		return 0, err
	}
	defer c.Close()
	return etcdview.Revision(ctx, c)
}

// changedPods writes count pods into the etcd at url, saves a snapshot,
// relabels 1% of them through the pod store, and saves another; it
// returns the two revisions and the two snapshot files.
func changedPods(ctx context.Context, dir, url string, count int) (from, to int64, fromSnap, toSnap string, err error) {
	progress(fmt.Sprintf("writing %d pods", count))
	if err = seedPods(ctx, url, count); err != nil {
		return
	}
	fromSnap, toSnap = filepath.Join(dir, fmt.Sprintf("from-%d.db", count)), filepath.Join(dir, fmt.Sprintf("to-%d.db", count))
	if from, err = revisionOf(ctx, url); err != nil {
		return
	}
	if err = saveSnapshot(ctx, url, fromSnap); err != nil {
		return
	}
	w, err := openSession(ctx, url)
	if err != nil {
		return
	}
	defer w.Close()
	pods := w.Map.Handles["pods"].Storage.(rest.Updater)
	getter := w.Map.Handles["pods"].Storage.(rest.Getter)
	for i := 0; i < count; i += 100 {
		spec, _ := benchPod(i)
		ns, name := spec.Namespace, spec.Name
		nsCtx := inNamespace(ctx, "pods", ns)
		obj, gerr := getter.Get(nsCtx, name, &metav1.GetOptions{})
		if gerr != nil {
			return 0, 0, "", "", fmt.Errorf("reading pod %s/%s: %w", ns, name, gerr)
		}
		pod := obj.(*api.Pod)
		pod.Labels["relabelled"] = "true"
		if _, _, err = pods.Update(nsCtx, name, rest.DefaultUpdatedObjectInfo(pod), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); err != nil {
			return
		}
	}
	if to, err = revisionOf(ctx, url); err != nil {
		return
	}
	err = saveSnapshot(ctx, url, toSnap)
	return
}
