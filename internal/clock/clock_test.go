package clock

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/apis/coordination"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/logs/logstest"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
)

func TestMain(m *testing.M) { logstest.Main(m) }

// base is the time the leases of these tests are renewed around, and now
// an hour after it.
var (
	base = time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	now  = base.Add(time.Hour)
)

// leases is a map of the leases store alone, as a command that tells a
// time builds it, on an ephemeral etcd; put writes a Lease renewed at a
// time there as the store would store it (the handle's codec), and
// returns the revision of the write.
func leases(t *testing.T) (*handle.Handle, *clientv3.Client, func(ns, name, holder string, renew time.Time) int64) {
	t.Helper()
	ctx := context.Background()
	s, err := storagemap.Open(ctx, storagemap.Config{Options: serverflags.NewOptions(), Only: LeasesPath, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	h, err := s.Map.Handle(LeasesPath)
	if err != nil {
		t.Fatal(err)
	}
	c, err := h.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	put := func(ns, name, holder string, renew time.Time) int64 {
		t.Helper()
		l := &coordination.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"holder": holder}},
			Spec:       coordination.LeaseSpec{HolderIdentity: &holder, RenewTime: &metav1.MicroTime{Time: renew}},
		}
		data, err := runtime.Encode(h.StorageCodec(), l)
		if err != nil {
			t.Fatal(err)
		}
		key, err := h.Key(ns, name)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Put(ctx, key, string(data))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Header.Revision
	}
	return h, c, put
}

func parse(t *testing.T, s string) Time {
	t.Helper()
	_, at, err := ParseRevision(s)
	if err != nil || at.IsZero() {
		t.Fatalf("%q: %v", s, err)
	}
	return at
}

// TestTellTheRevisionOfATime writes Leases renewed at known times, one
// label change that renews nothing, and one Lease written back with a
// renewTime of an hour before (a restore), and tells times as revisions:
// the last revision a clock reads at or before the time, with the next
// clock; and refuses a time after now or before the first clock.
func TestTellTheRevisionOfATime(t *testing.T) {
	ctx := context.Background()
	h, c, put := leases(t)
	clocks, err := Read(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := clocks.Revision(parse(t, "2026-11-29T14:00:00Z"), now); err == nil || !strings.Contains(err.Error(), "etcd holds no Lease to tell the time of a revision by") {
		t.Errorf("no lease: %v", err)
	}

	a0 := put("kube-system", "a", "one", base)
	b5 := put("kube-node-lease", "b", "node", base.Add(5*time.Second))
	a10 := put("kube-system", "a", "one", base.Add(10*time.Second))
	label := put("kube-system", "a", "one-relabelled", base.Add(10*time.Second))
	restored := put("kube-system", "c", "restored", base.Add(-time.Hour))
	a20 := put("kube-system", "a", "one", base.Add(20*time.Second+123456*time.Microsecond))
	b25 := put("kube-node-lease", "b", "node", base.Add(25*time.Second))
	rev, err := etcdview.Revision(ctx, c)
	if err != nil {
		t.Fatal(err)
	}

	clocks, err = Read(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	if after, err := etcdview.Revision(ctx, c); err != nil || after != rev {
		t.Errorf("the revision after reading the clocks is %d (%v), want %d: reading wrote", after, err, rev)
	}
	var got []string
	for _, s := range clocks.Samples {
		got = append(got, fmt.Sprintf("%d %s %s", s.Revision, Format(s.Time), s.Clock))
	}
	want := []string{
		fmt.Sprintf("%d 2026-11-29T14:00:00Z Lease kube-system/a", a0),
		fmt.Sprintf("%d 2026-11-29T14:00:05Z Lease kube-node-lease/b", b5),
		fmt.Sprintf("%d 2026-11-29T14:00:10Z Lease kube-system/a", a10),
		fmt.Sprintf("%d 2026-11-29T14:00:20.12Z Lease kube-system/a", a20),
		fmt.Sprintf("%d 2026-11-29T14:00:25Z Lease kube-node-lease/b", b25),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || clocks.SetAside != 1 || clocks.Oldest != 1 || clocks.Current != rev {
		t.Errorf("samples\n%s\nset aside %d, oldest %d, current %d; want\n%s\none set aside (the restored lease), 1, %d", strings.Join(got, "\n"), clocks.SetAside, clocks.Oldest, clocks.Current, strings.Join(want, "\n"), rev)
	}

	for _, tc := range []struct {
		at   string
		want int64
		note string
	}{
		{"2026-11-29T14:00:12Z", a10, fmt.Sprintf("2026-11-29T14:00:12Z is revision %d (Lease kube-system/a renewed at 14:00:10Z; the next clock, revision %d, reads 14:00:20.12Z)", a10, a20)},
		{"2026-11-29T14:00:10Z", a10, ""},
		{"2026-11-29T15:00:10+01:00", a10, ""},
		{"2026-11-29T14:00:09.999Z", b5, ""},
		{"59m50s", a10, fmt.Sprintf("59m50s ago (2026-11-29T14:00:10Z) is revision %d (Lease kube-system/a renewed at 14:00:10Z; the next clock, revision %d, reads 14:00:20.12Z)", a10, a20)},
		{"2026-11-29T14:00:30Z", b25, fmt.Sprintf("2026-11-29T14:00:30Z is revision %d (Lease kube-node-lease/b renewed at 14:00:25Z; no clock after it up to the current revision %d)", b25, rev)},
	} {
		told, err := clocks.Revision(parse(t, tc.at), now)
		if err != nil || told.Revision != tc.want {
			t.Errorf("%s: revision %d (%v), want %d", tc.at, told.Revision, err, tc.want)
		}
		if tc.note != "" && told.Note() != tc.note {
			t.Errorf("%s: note\n%s\nwant\n%s", tc.at, told.Note(), tc.note)
		}
	}
	for at, want := range map[string]string{
		"2026-11-29T13:59:59Z": fmt.Sprintf("2026-11-29T13:59:59Z is before the first revision etcd can tell the time of: its first clock, revision %d, reads 2026-11-29T14:00:00Z", a0),
		"2026-11-29T15:00:01Z": "2026-11-29T15:00:01Z is after now (2026-11-29T15:00:00Z): etcd holds no revision of that time yet",
	} {
		if _, err := clocks.Revision(parse(t, at), now); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", at, err, want)
		}
	}

	// A revision between clocks lies between their times; one that
	// renewed a lease is its own time.
	if after, before := clocks.Bounds(label); after == nil || after.Revision != a10 || before == nil || before.Revision != a20 {
		t.Errorf("the bounds of the label change: %+v, %+v; want the clocks of %d and %d", after, before, a10, a20)
	}
	if after, before := clocks.Bounds(restored); after == nil || after.Revision != a10 || before == nil || before.Revision != a20 {
		t.Errorf("the bounds of the restored lease: %+v, %+v; want the clocks of %d and %d", after, before, a10, a20)
	}
	if after, before := clocks.Bounds(a20); after == nil || after != before || after.Revision != a20 {
		t.Errorf("the bounds of a renewal: %+v, %+v; want itself", after, before)
	}
	if after, before := clocks.Bounds(rev + 1); after == nil || after.Revision != b25 || before != nil {
		t.Errorf("the bounds of a revision after the last clock: %+v, %+v; want the last clock and none", after, before)
	}

	// Once compacted past a0..label, the leases held then say the oldest
	// revision was written at 14:00:10 or after, and no earlier time can
	// be told; a deleted lease created again is a clock.
	if _, err := c.Compact(ctx, label); err != nil {
		t.Fatal(err)
	}
	key, _ := h.Key("kube-node-lease", "b")
	if _, err := c.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	b40 := put("kube-node-lease", "b", "node", base.Add(40*time.Second))
	clocks, err = Read(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	if clocks.Oldest != label || clocks.Floor == nil || !clocks.Floor.Time.Equal(base.Add(10*time.Second)) || len(clocks.Samples) != 3 || clocks.Samples[2].Revision != b40 {
		t.Errorf("after the compaction: oldest %d, floor %+v, samples %+v; want %d, 14:00:10, the renewals at 20s and 25s and the lease created again at 40s", clocks.Oldest, clocks.Floor, clocks.Samples, label)
	}
	want12 := fmt.Sprintf("2026-11-29T14:00:12Z is before the oldest revision etcd can tell the time of: it compacted its history up to revision %d, and its oldest clock since, revision %d, reads 2026-11-29T14:00:20.12Z", label, a20)
	if _, err := clocks.Revision(parse(t, "2026-11-29T14:00:12Z"), now); err == nil || err.Error() != want12 {
		t.Errorf("a compacted time: %v, want %q", err, want12)
	}
	if told, err := clocks.Revision(parse(t, "2026-11-29T14:00:22Z"), now); err != nil || told.Revision != a20 {
		t.Errorf("a time after the compaction: %d (%v), want %d", told.Revision, err, a20)
	}
	if after, before := clocks.Bounds(restored); after == nil || after != clocks.Floor || before == nil || before.Revision != a20 {
		t.Errorf("the bounds of a revision after the compaction, before any clock: %+v, %+v; want the floor and %d", after, before, a20)
	}
}

// TestNoClockAfterTheCompaction: Leases held at the compaction but none
// renewed since tell no time.
func TestNoClockAfterTheCompaction(t *testing.T) {
	ctx := context.Background()
	h, c, put := leases(t)
	put("kube-system", "a", "one", base)
	rev := put("kube-system", "a", "one", base.Add(time.Second))
	if _, err := c.Compact(ctx, rev); err != nil {
		t.Fatal(err)
	}
	clocks, err := Read(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("no Lease was renewed after revision %d, the oldest etcd holds, to tell the time of a revision by: name the revision by its number (`regctl inspect TYPE/NAME --history` lists an object's)", rev)
	if _, err := clocks.Revision(parse(t, "1m"), now); err == nil || err.Error() != want {
		t.Errorf("%v, want %q", err, want)
	}
}

// TestLeasesOnOtherServers: the revisions of another etcd are no clocks
// of this one.
func TestLeasesOnOtherServers(t *testing.T) {
	h := &handle.Handle{}
	h.Route.EtcdServers = []string{"https://10.0.0.9:2379"}
	if _, err := Read(context.Background(), h); err == nil || !strings.Contains(err.Error(), "are kept on other etcd servers (https://10.0.0.9:2379, `--etcd-servers-overrides`)") {
		t.Errorf("%v", err)
	}
}
