package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/regctl/regctl/internal/etcdview/embedded"
	"github.com/regctl/regctl/internal/etcdview/snapshot"
	"github.com/regctl/regctl/internal/logs"
)

// Targets of the snapshot benchmark: a snapshot is read about as fast as
// the live etcd it was saved from, and opening it costs the same whatever
// its size.
const (
	snapshotWallTarget = 1.2                   // get pods -A -o json on the snapshot, over the live etcd
	snapshotOpenTarget = 50 * time.Millisecond // opening, of any size
)

// snapshots writes pods into an etcd in this process, saves it as
// `etcdctl snapshot save` does, and measures regctl's read of every pod on
// the snapshot next to the same read on the live etcd, and the cost of
// opening a small and the large snapshot.
func snapshots(dir, launcher, regctl string, n, pods int, profile func([]command) error) error {
	logs.Setup(0, io.Discard)
	ctx := context.Background()
	small, err := seededSnapshot(ctx, filepath.Join(dir, "small.db"), pods/100)
	if err != nil {
		return err
	}
	e, err := embedded.Start(nil)
	if err != nil {
		return err
	}
	defer e.Close()
	progress(fmt.Sprintf("writing %d pods through the pod store", pods))
	if err := seedPods(ctx, e.ClientURL, pods); err != nil {
		return err
	}
	large := filepath.Join(dir, "large.db")
	if err := saveSnapshot(ctx, e.ClientURL, large); err != nil {
		return err
	}
	runtime.GC()
	debug.FreeOSMemory()
	fmt.Printf("snapshots of %d pods (%s) and of %d pods (%s)\n\n", pods/100, size(small), pods, size(large))

	t := newTable(launcher, 48, true)
	t.header = "vs live etcd"
	live, err := t.add(command{
		name: "regctl get pods -A -o json (live etcd)", bin: regctl,
		args:   []string{"get", "pods", "-A", "-o", "json", "--etcd-servers=" + e.ClientURL},
		verify: occurs(`"kind": "Pod"`, pods),
	}, n, func(stats) string { return "anchor" })
	if err != nil {
		return err
	}
	snapRead := command{
		name: "regctl get pods -A -o json --snapshot", bin: regctl,
		args:   []string{"get", "pods", "-A", "-o", "json", "--snapshot=" + large},
		verify: occurs(`"kind": "Pod"`, pods),
	}
	snap, err := t.add(snapRead, n, func(st stats) string { return fmt.Sprintf("%.2fx", ratio(st, live)) })
	if err != nil {
		return err
	}
	// The same read of a snapshot a hundredth the size: memory is the
	// same whatever the file's size.
	if _, err := t.add(command{
		name: fmt.Sprintf("regctl get pods -A -o json --snapshot (%d pods)", pods/100), bin: regctl,
		args:   []string{"get", "pods", "-A", "-o", "json", "--snapshot=" + small},
		verify: occurs(`"kind": "Pod"`, pods/100),
	}, n, func(stats) string { return "" }); err != nil {
		return err
	}

	fmt.Println()
	fmt.Printf("%-48s %10s %10s %10s\n", "opening (in this process)", "median", "min", "max")
	var opens []time.Duration
	for _, path := range []string{small, large} {
		d, err := openTimes(path, max(n, 10))
		if err != nil {
			return err
		}
		fmt.Printf("%-48s %10s %10s %10s\n", "snapshot.Open "+size(path), fineMs(d[len(d)/2]), fineMs(d[0]), fineMs(d[len(d)-1]))
		opens = append(opens, d[len(d)/2])
	}

	// The first read indexes the snapshot and checks every bucket's pages
	// on the way: what a damaged file is told by.
	fmt.Println()
	fmt.Printf("%-48s %10s %10s %10s\n", "first read: index, check (in this process)", "median", "min", "max")
	for _, path := range []string{small, large} {
		d, err := firstReadTimes(ctx, path, max(n, 3))
		if err != nil {
			return err
		}
		fmt.Printf("%-48s %10s %10s %10s\n", "count of every key "+size(path), fineMs(d[len(d)/2]), fineMs(d[0]), fineMs(d[len(d)-1]))
	}

	fmt.Println()
	fmt.Println("targets:")
	verdict(fmt.Sprintf("get pods -A -o json: %.2fx on the snapshot", ratio(snap, live)), fmt.Sprintf("<= %gx", snapshotWallTarget), ratio(snap, live) <= snapshotWallTarget)
	for i, path := range []string{small, large} {
		verdict(fmt.Sprintf("opening %s: %s", size(path), fineMs(opens[i])), fmt.Sprintf("<= %d ms", snapshotOpenTarget.Milliseconds()), opens[i] <= snapshotOpenTarget)
	}
	if profile != nil {
		return profile([]command{snapRead})
	}
	return nil
}

// seededSnapshot writes pods into a fresh etcd and saves it to path.
func seededSnapshot(ctx context.Context, path string, pods int) (string, error) {
	e, err := embedded.Start(nil)
	if err != nil {
		return "", err
	}
	defer e.Close()
	progress(fmt.Sprintf("writing %d pods for a small snapshot", pods))
	if err := seedPods(ctx, e.ClientURL, pods); err != nil {
		return "", err
	}
	return path, saveSnapshot(ctx, e.ClientURL, path)
}

// saveSnapshot saves the etcd at url to path as `etcdctl snapshot save`
// does, through the client's Snapshot stream.
func saveSnapshot(ctx context.Context, url, path string) error {
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, DialTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer c.Close()
	r, err := c.Snapshot(ctx)
	if err != nil {
		return err
	}
	defer r.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// openTimes opens and closes the snapshot n times, sorted durations.
func openTimes(path string, n int) ([]time.Duration, error) {
	var out []time.Duration
	for range n {
		start := time.Now()
		s, err := snapshot.Open(path)
		if err != nil {
			return nil, err
		}
		out = append(out, time.Since(start))
		s.Close()
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// firstReadTimes opens the snapshot n times and counts its keys through
// etcd's client, the first read, which indexes and checks it: sorted
// durations.
func firstReadTimes(ctx context.Context, path string, n int) ([]time.Duration, error) {
	var out []time.Duration
	for range n {
		runtime.GC()
		start := time.Now()
		s, err := snapshot.Open(path)
		if err != nil {
			return nil, err
		}
		c, err := clientv3.New(clientv3.Config{Endpoints: []string{s.ClientURL}, DialTimeout: 5 * time.Second})
		if err == nil {
			_, err = c.Get(ctx, "\x00", clientv3.WithFromKey(), clientv3.WithCountOnly())
			c.Close()
		}
		out = append(out, time.Since(start))
		s.Close()
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

func size(path string) string {
	info, err := os.Stat(path)
	if err != nil {
		return "?"
	}
	return fmt.Sprintf("%.1f MiB", float64(info.Size())/(1<<20))
}

// fineMs shows durations under a millisecond too.
func fineMs(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
