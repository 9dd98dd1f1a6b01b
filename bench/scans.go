package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/logs"
	"github.com/regctl/regctl/internal/storagemap"
)

// Targets of the scan benchmark: a scan of every key costs about what
// etcdctl's raw read of them does, and its memory does not grow with the
// number of keys. regctl space reads every value too, as scan does but
// decoding none, and costs as much without its history; its history is
// every write here (the harness never compacts), which etcd feeds a watch
// at its own pace, so it has no target of its own.
const (
	scanWallTarget  = 1.5 // regctl scan over etcdctl get --prefix -w json
	scanRSSTarget   = 150 // MiB
	scanRSSFlat     = 1.2 // peak RSS at the full size over the small one
	spaceWallTarget = 1.5 // regctl space --max-history 1 over etcdctl get --prefix -w json
)

// scans fills an etcd with pods, config maps and events (a sixth as many
// of each as pods) in two steps, a fifteenth of it first, and at each
// measures regctl scan and regctl space of every key next to etcdctl's
// read of them.
func scans(dir, launcher, regctl string, n, pods int, profile func([]command) error) error {
	logs.Setup(0, io.Discard)
	progress("building etcdctl")
	etcdctl, err := buildEtcdctl(dir)
	if err != nil {
		return err
	}
	ctx := context.Background()
	e, w, stop, err := startWithNamespaces(ctx)
	if err != nil {
		return err
	}
	defer stop()
	t := newTable(launcher, 48, true)
	t.header = "vs etcdctl"
	var small, full stats
	var last command
	var smallObjects int
	seeded := 0
	for step, target := range []int{pods / 15, pods} {
		progress(fmt.Sprintf("writing pods, config maps and events up to %d pods", target))
		if err := seedMixed(w, seeded, target); err != nil {
			return err
		}
		seeded = target
		runtime.GC()
		debug.FreeOSMemory()
		keys, size, err := storedSize(ctx, e.ClientURL, "/registry/")
		if err != nil {
			return err
		}
		fmt.Printf("%d pods, %d config maps, %d events: %d keys under /registry/, %.1f MiB of values\n",
			target, target/6, target/6, keys, float64(size)/(1<<20))
		raw, err := t.add(command{
			name: fmt.Sprintf("etcdctl get /registry/ --prefix -w json (%d keys)", keys), bin: etcdctl,
			args:   []string{"--endpoints=" + e.ClientURL, "get", "/registry/", "--prefix", "-w", "json"},
			verify: occurs(`"create_revision":`, int(keys)),
		}, n, func(stats) string { return "anchor" })
		if err != nil {
			return err
		}
		last = command{
			name: fmt.Sprintf("regctl scan -o json (%d keys)", keys), bin: regctl,
			args:   []string{"scan", "-o", "json", "--etcd-servers=" + e.ClientURL},
			verify: occurs(fmt.Sprintf(`"keys": %d,`, keys), 1),
		}
		scanned, err := t.add(last, n, func(st stats) string { return fmt.Sprintf("%.2fx", ratio(st, raw)) })
		if err != nil {
			return err
		}
		spaced, err := t.add(command{
			name: fmt.Sprintf("regctl space -o json --max-history 1 (%d keys)", keys), bin: regctl,
			args:   []string{"space", "-o", "json", "--max-history", "1", "--etcd-servers=" + e.ClientURL},
			verify: occurs(fmt.Sprintf("\n  \"keys\": %d,", keys), 1),
		}, n, func(st stats) string { return fmt.Sprintf("%.2fx", ratio(st, raw)) })
		if err != nil {
			return err
		}
		revisions, err := revisionOn(ctx, e.ClientURL)
		if err != nil {
			return err
		}
		if _, err := t.add(command{
			name: fmt.Sprintf("regctl space -o json (%d keys, %d revisions of history)", keys, revisions-1), bin: regctl,
			args:   []string{"space", "-o", "json", "--etcd-servers=" + e.ClientURL},
			verify: occurs(`"read": true`, 1),
		}, n, func(st stats) string { return fmt.Sprintf("%.2fx", ratio(st, raw)) }); err != nil {
			return err
		}
		if step == 0 {
			small, smallObjects = scanned, int(keys)
		} else {
			full = scanned
			fmt.Println()
			fmt.Println("targets:")
			verdict(fmt.Sprintf("scan of %d keys: %.2fx etcdctl -w json", keys, ratio(scanned, raw)), fmt.Sprintf("<= %gx", scanWallTarget), ratio(scanned, raw) <= scanWallTarget)
			verdict(fmt.Sprintf("space of %d keys, no history: %.2fx etcdctl", keys, ratio(spaced, raw)), fmt.Sprintf("<= %gx", spaceWallTarget), ratio(spaced, raw) <= spaceWallTarget)
		}
	}
	verdict(fmt.Sprintf("scan: %.1f MiB peak RSS", full.mib()), fmt.Sprintf("<= %d MiB", scanRSSTarget), full.mib() <= scanRSSTarget)
	growth := full.mib() / small.mib()
	verdict(fmt.Sprintf("scan: peak RSS %.2fx from %d keys", growth, smallObjects), fmt.Sprintf("<= %gx", scanRSSFlat), growth <= scanRSSFlat)
	if profile != nil {
		return profile([]command{last})
	}
	return nil
}

// seedMixed writes pods from..to, and a config map and an event for every
// sixth of them, through the server's stores.
func seedMixed(w *storagemap.Session, from, to int) error {
	creater := w.Map.Handles["pods"].Storage.(rest.Creater)
	statusUpdater := w.Map.Handles["pods/status"].Storage.(rest.Updater)
	configMaps := w.Map.Handles["configmaps"].Storage.(rest.Creater)
	events := w.Map.Handles["events"].Storage.(rest.Creater)
	return inParallel(8, from, to, 1, func(i int) error {
		if err := seedPod(creater, statusUpdater, i); err != nil || i%6 != 0 {
			return err
		}
		return seedNeighbours(configMaps, events, i)
	})
}

// seedNeighbours writes the config map a pod's app reads and the event its
// scheduling left.
func seedNeighbours(configMaps, events rest.Creater, i int) error {
	spec, _ := benchPod(i)
	ctx := inNamespace(context.Background(), "configmaps", spec.Namespace)
	cm := &api.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-config", spec.Name), Namespace: spec.Namespace, Labels: spec.Labels},
		Data: map[string]string{
			"app.properties": fmt.Sprintf("listen=:8080\nupstream=http://%s.%s.svc:8080\ntimeout=30s\nretries=3\n", spec.Labels["app"], spec.Namespace),
			"log.level":      "info",
		},
	}
	if _, err := configMaps.Create(ctx, cm, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating config map %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	now := metav1.NewTime(time.Unix(1700000000, 0))
	ev := &api.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", spec.Name, 0x17a2b3c4d5e6f700+i), Namespace: spec.Namespace},
		InvolvedObject: api.ObjectReference{Kind: "Pod", Namespace: spec.Namespace, Name: spec.Name, APIVersion: "v1", FieldPath: "spec.containers{app}"},
		Reason:         "Scheduled",
		Message:        fmt.Sprintf("Successfully assigned %s/%s to %s", spec.Namespace, spec.Name, spec.Spec.NodeName),
		Source:         api.EventSource{Component: "default-scheduler"},
		FirstTimestamp: now,
		LastTimestamp:  now,
		Count:          1,
		Type:           api.EventTypeNormal,
	}
	// Core events are validated by the version they are created in.
	ctx = genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{IsResourceRequest: true, APIVersion: "v1", Resource: "events", Namespace: spec.Namespace, Verb: "create"})
	if _, err := events.Create(inNamespace(context.Background(), "events", spec.Namespace), ev, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating event %s/%s: %w", ev.Namespace, ev.Name, err)
	}
	return nil
}

// revisionOn is the revision of the etcd at url.
func revisionOn(ctx context.Context, url string) (int64, error) {
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, DialTimeout: 5 * time.Second})
	if err != nil {
		return 0, err
	}
	defer c.Close()
	return etcdview.Revision(ctx, c)
}
