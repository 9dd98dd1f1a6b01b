package etcdview

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/regctl/regctl/internal/etcdview/embedded"
	"github.com/regctl/regctl/internal/etcdview/etcdtest"
	"github.com/regctl/regctl/internal/etcdview/snapshot"
)

// TestMemberStatusesAreEtcds: each endpoint's figures are those of
// etcd's own status answer, which `etcdctl endpoint status` prints; an
// endpoint that does not answer is listed with why, and none answering is
// an error.
func TestMemberStatusesAreEtcds(t *testing.T) {
	e, c := etcdtest.Start(t)
	ctx := context.Background()
	for i := range 20 {
		if _, err := c.Put(ctx, fmt.Sprintf("/registry/configmaps/a/%d", i), strings.Repeat("x", 1000)); err != nil {
			t.Fatal(err)
		}
	}
	settle(t, c)
	got, err := MemberStatuses(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	answer, err := c.Status(ctx, e.ClientURL)
	if err != nil {
		t.Fatal(err)
	}
	resp := (*etcdserverpb.StatusResponse)(answer)
	want := MemberStatus{
		Endpoint: e.ClientURL, ID: fmt.Sprintf("%x", resp.GetHeader().GetMemberId()), Version: resp.GetVersion(), StorageVersion: resp.GetStorageVersion(),
		DBSize: resp.GetDbSize(), DBSizeInUse: resp.GetDbSizeInUse(), Quota: resp.GetDbSizeQuota(), Leader: true,
		RaftTerm: resp.GetRaftTerm(), RaftIndex: resp.GetRaftIndex(), RaftAppliedIndex: resp.GetRaftAppliedIndex(), Revision: resp.GetHeader().GetRevision(),
	}
	if len(got) != 1 || fmt.Sprintf("%+v", got[0]) != fmt.Sprintf("%+v", want) {
		t.Errorf("statuses %+v, want [%+v]", got, want)
	}
	// A lone member with the default quota leads, and says its quota.
	if want.Quota != 2<<30 || want.DBSize == 0 || want.Version == "" || want.Revision != 21 {
		t.Errorf("etcd's own answer %+v: not what a default member with 20 writes says", want)
	}

	// A dead endpoint is waited for as long as the request may last.
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	dead := "http://127.0.0.1:1"
	both, err := clientv3.New(clientv3.Config{Endpoints: []string{e.ClientURL, dead}, DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer both.Close()
	got, err = MemberStatuses(ctx, both)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != want.ID || got[1].Endpoint != dead || got[1].Error == "" || got[1].ID != "" {
		t.Errorf("statuses of a live and a dead endpoint: %+v", got)
	}
	none, err := clientv3.New(clientv3.Config{Endpoints: []string{dead}, DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer none.Close()
	if _, err := MemberStatuses(ctx, none); err == nil || !strings.HasPrefix(err.Error(), "reading the status of etcd's members: ") {
		t.Errorf("no endpoint answering: %v", err)
	}
}

// TestAnEtcdOverItsQuota fills an etcd with a tiny quota until it refuses
// a write: its NOSPACE alarm is listed, with the member that raised it, as
// etcd's own alarm list has it, without a request through raft (etcd's
// raft index stays put); its status and history are still read.
func TestAnEtcdOverItsQuota(t *testing.T) {
	const quota = 1 << 20
	e, err := embedded.Start(nil, embedded.WithQuota(quota))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	c := etcdtest.Client(t, e.ClientURL)
	ctx := context.Background()
	statuses, err := MemberStatuses(ctx, c)
	if err != nil || len(AlarmsOf(statuses)) != 0 {
		t.Fatalf("alarms of a new etcd: %v, %v", AlarmsOf(statuses), err)
	}
	fillUntilNoSpace(t, c)
	statuses, err = MemberStatuses(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	alarms := AlarmsOf(statuses)
	s, err := Alarms(ctx, c)
	if err != nil || !slices.Equal(s, []string{"NOSPACE on member " + statuses[0].ID}) {
		t.Errorf("alarms as scan says them: %q, %v", s, err)
	}
	after, err := MemberStatuses(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if after[0].RaftIndex != statuses[0].RaftIndex {
		t.Errorf("reading the alarms moved etcd's raft index from %d to %d", statuses[0].RaftIndex, after[0].RaftIndex)
	}
	// etcd's own list, as `etcdctl alarm list` asks for it (through raft).
	listed, err := c.AlarmList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var want []Alarm
	for _, a := range listed.Alarms {
		want = append(want, Alarm{Member: fmt.Sprintf("%x", a.MemberID), Alarm: a.Alarm.String()})
	}
	if len(want) != 1 || want[0] != (Alarm{Member: statuses[0].ID, Alarm: "NOSPACE"}) || !slices.Equal(alarms, want) {
		t.Errorf("alarms %v, etcd lists %v", alarms, want)
	}
	if st := statuses[0]; st.Quota != quota || st.DBSize == 0 {
		t.Errorf("status %+v, want the quota %d", st, quota)
	}
	current, err := Revision(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := Changes(ctx, c, 2, current, func(*clientv3.Event) error { n++; return nil }); err != nil || int64(n) != current-1 {
		t.Errorf("the history of an etcd under its alarm: %d changes, %v; want %d", n, err, current-1)
	}
}

// TestAlarmsOfStatusErrors reads alarms in the text of a status's errors,
// however protobuf spaces it, and leaves the other errors.
func TestAlarmsOfStatusErrors(t *testing.T) {
	got := AlarmsOf([]MemberStatus{
		{Errors: []string{"etcdserver: no leader", "memberID:14407739417186467167  alarm:NOSPACE"}},
		{Errors: []string{"memberID:14407739417186467167 alarm:NOSPACE ", "memberID: 10 alarm: CORRUPT"}},
	})
	want := []Alarm{{Member: "c7f292aa19cafd5f", Alarm: "NOSPACE"}, {Member: "a", Alarm: "CORRUPT"}}
	if !slices.Equal(got, want) {
		t.Errorf("alarms %v, want %v", got, want)
	}
}

// settle has etcd commit what it has written to its database: it does
// so before it sends a snapshot, which is read here and dropped. Until the
// next write, the database's size and the part of it in use then stay
// put; otherwise etcd commits within 100 ms of a write, whenever a reader
// of its status looks.
func settle(t *testing.T, c *clientv3.Client) {
	t.Helper()
	r, err := c.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := io.Copy(io.Discard, r); err != nil {
		t.Fatal(err)
	}
}

// fillUntilNoSpace writes values of 64 KiB until etcd refuses one for want
// of space.
func fillUntilNoSpace(t *testing.T, c *clientv3.Client) {
	t.Helper()
	value := strings.Repeat("x", 64<<10)
	for i := 0; ; i++ {
		_, err := c.Put(context.Background(), fmt.Sprintf("/registry/configmaps/big/%04d", i), value)
		if NoSpace(err) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if i > 1000 {
			t.Fatal("etcd took 64 MiB without reaching its quota")
		}
	}
}

// history writes a history: keys written several times, one deleted,
// one deleted then created again, and a compaction in the middle.
func history(t *testing.T, c *clientv3.Client) {
	t.Helper()
	ctx := context.Background()
	put := func(k, v string) int64 {
		resp, err := c.Put(ctx, k, v)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Header.Revision
	}
	del := func(k string) {
		if _, err := c.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		put("/registry/leases/kube-node-lease/n1", strings.Repeat("l", 100+i))
	}
	put("/registry/configmaps/a/gone", "soon")
	compactAt := put("/registry/configmaps/a/again", "first")
	if _, err := c.Compact(ctx, compactAt, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		put("/registry/leases/kube-node-lease/n1", strings.Repeat("L", 200+i))
	}
	del("/registry/configmaps/a/gone")
	del("/registry/configmaps/a/again")
	put("/registry/configmaps/a/again", "second")
	put("/registry/configmaps/a/new", "value")
}

// changes are the changes Changes reads from after the compaction, as
// lines.
func changes(t *testing.T, c *clientv3.Client) []string {
	t.Helper()
	ctx := context.Background()
	oldest, err := OldestRevision(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	current, err := Revision(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	err = Changes(ctx, c, oldest+1, current, func(ev *clientv3.Event) error {
		prev := "-"
		if ev.PrevKv != nil {
			prev = fmt.Sprintf("%d:%d bytes", ev.PrevKv.ModRevision, len(ev.PrevKv.Value))
		}
		out = append(out, fmt.Sprintf("%d %s %s %d bytes, before %s", ev.Kv.ModRevision, ev.Type, ev.Kv.Key, len(ev.Kv.Value), prev))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestChangesAreTheHistoryEtcdHolds reads the changes after a compaction,
// each with the value it replaced, live and from a snapshot of the same
// etcd: the same, in revision order.
func TestChangesAreTheHistoryEtcdHolds(t *testing.T) {
	_, c := etcdtest.Start(t)
	history(t, c)
	live := changes(t, c)
	want := []string{
		"9 PUT /registry/leases/kube-node-lease/n1 200 bytes, before 6:104 bytes",
		"10 PUT /registry/leases/kube-node-lease/n1 201 bytes, before 9:200 bytes",
		"11 PUT /registry/leases/kube-node-lease/n1 202 bytes, before 10:201 bytes",
		"12 PUT /registry/leases/kube-node-lease/n1 203 bytes, before 11:202 bytes",
		"13 PUT /registry/leases/kube-node-lease/n1 204 bytes, before 12:203 bytes",
		"14 DELETE /registry/configmaps/a/gone 0 bytes, before 7:4 bytes",
		"15 DELETE /registry/configmaps/a/again 0 bytes, before 8:5 bytes",
		"16 PUT /registry/configmaps/a/again 6 bytes, before -",
		"17 PUT /registry/configmaps/a/new 5 bytes, before -",
	}
	if !slices.Equal(live, want) {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(live, "\n"), strings.Join(want, "\n"))
	}
	path := filepath.Join(t.TempDir(), "snapshot.db")
	etcdtest.SaveSnapshot(t, c, path)
	snap, err := snapshot.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if fromSnap := changes(t, etcdtest.Client(t, snap.ClientURL)); !slices.Equal(fromSnap, live) {
		t.Errorf("changes from the snapshot:\n%s\nlive:\n%s", strings.Join(fromSnap, "\n"), strings.Join(live, "\n"))
	}
}

// TestChangesKeepTheirOrderWithinATransaction: a transaction's changes
// share its revision, and come in its order.
func TestChangesKeepTheirOrderWithinATransaction(t *testing.T) {
	_, c := etcdtest.Start(t)
	ctx := context.Background()
	if _, err := c.Txn(ctx).Then(clientv3.OpPut("b", "1"), clientv3.OpPut("a", "2")).Commit(); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := Changes(ctx, c, 2, 2, func(ev *clientv3.Event) error {
		if ev.Type != mvccpb.PUT {
			t.Errorf("event %v", ev)
		}
		got = append(got, string(ev.Kv.Key))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"b", "a"}) {
		t.Errorf("changes of one transaction: %v", got)
	}
}
