package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/etcdview/embedded"
	"github.com/regctl/regctl/internal/space"
)

// etcdStatus is etcd's own status answer of the member at endpoint, which
// `etcdctl endpoint status` prints.
func etcdStatus(t *testing.T, c *clientv3.Client, endpoint string) *etcdserverpb.StatusResponse {
	t.Helper()
	answer, err := c.Status(context.Background(), endpoint)
	if err != nil {
		t.Fatal(err)
	}
	return (*etcdserverpb.StatusResponse)(answer)
}

func spaceReport(t *testing.T, args ...string) space.Report {
	t.Helper()
	var r space.Report
	if err := json.Unmarshal([]byte(mustRun(t, append([]string{"space", "-o", "json"}, args...)...)), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSpaceOfAnEtcdOverItsQuota fills an etcd with a small quota through
// regctl and raw writes until it raises its NOSPACE alarm, and runs
// `regctl space` on it and on a snapshot of it: the members' figures are
// etcd's own status answer (what `etcdctl endpoint status` prints), the
// alarm is shown, each resource's keys and bytes are what etcd holds under
// its prefix, the largest objects and hot keys come in order, the
// snapshot's report is the file's own, and the revision stays put.
func TestSpaceOfAnEtcdOverItsQuota(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const quota = 3 << 20
	e, err := embedded.Start(nil, embedded.WithQuota(quota))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	c := etcdClient(t, e.ClientURL)
	etcdFlag := "--etcd-servers=" + e.ClientURL
	mustRun(t, "create", "-f", manifestFile(t, shopNamespace+"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: shop}\ndata: {a: b}\n"), etcdFlag)
	for i := range 20 {
		if _, err := c.Put(ctx, "/registry/leases/kube-node-lease/node-1", strings.Repeat("l", 100+i)); err != nil {
			t.Fatal(err)
		}
	}
	value := strings.Repeat("x", 64<<10)
	for i := 0; ; i++ {
		_, err := c.Put(ctx, fmt.Sprintf("/registry/configmaps/big/cm%04d", i), value[:len(value)-i])
		if etcdview.NoSpace(err) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}

	// etcd commits its database before it sends a snapshot: its status
	// then stays put, with nothing written.
	path := saveSnapshot(t, c)
	before := etcdStatus(t, c, e.ClientURL)
	r := spaceReport(t, "--top", "3", "--by", "namespace", etcdFlag)
	st := etcdStatus(t, c, e.ClientURL)
	if st.GetHeader().GetRevision() != before.GetHeader().GetRevision() || st.GetRaftIndex() != before.GetRaftIndex() {
		t.Errorf("space moved etcd's revision from %d to %d, its raft index from %d to %d",
			before.GetHeader().GetRevision(), st.GetHeader().GetRevision(), before.GetRaftIndex(), st.GetRaftIndex())
	}
	if len(r.Members) != 1 {
		t.Fatalf("members %+v", r.Members)
	}
	m := r.Members[0]
	if m.ID != fmt.Sprintf("%x", st.GetHeader().GetMemberId()) || m.DBSize != st.GetDbSize() || m.DBSizeInUse != st.GetDbSizeInUse() ||
		m.Quota != quota || st.GetDbSizeQuota() != quota || m.Version != st.GetVersion() || !m.Leader || m.Revision != st.GetHeader().GetRevision() {
		t.Errorf("member %+v; etcd's status: %v", m, st)
	}
	if want := []etcdview.Alarm{{Member: m.ID, Alarm: "NOSPACE"}}; !slices.Equal(r.Alarms, want) {
		t.Errorf("alarms %v, want %v", r.Alarms, want)
	}
	for _, res := range r.Resources {
		resp, err := c.Get(ctx, res.KeyPrefix, clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		var bytes int64
		for _, kv := range resp.Kvs {
			bytes += int64(len(kv.Value))
		}
		if res.Keys != int64(len(resp.Kvs)) || res.Bytes != bytes {
			t.Errorf("%s: %d keys, %d bytes; etcd holds %d keys, %d bytes under %s", res.Resource, res.Keys, res.Bytes, len(resp.Kvs), bytes, res.KeyPrefix)
		}
	}
	if r.Resources[0].Resource != "configmaps" || r.Namespaces[0].Namespace != "big" {
		t.Errorf("resources %+v, namespaces %+v: want the config maps of big first", r.Resources, r.Namespaces)
	}
	var largest []string
	for _, o := range r.Largest {
		largest = append(largest, o.Key)
	}
	if want := []string{"/registry/configmaps/big/cm0000", "/registry/configmaps/big/cm0001", "/registry/configmaps/big/cm0002"}; !slices.Equal(largest, want) {
		t.Errorf("largest %v, want %v", largest, want)
	}
	if !slices.IsSortedFunc(r.HotKeys, func(a, b space.HotKey) int { return cmp.Compare(b.Revisions, a.Revisions) }) || len(r.HotKeys) == 0 ||
		r.HotKeys[0].Key != "/registry/leases/kube-node-lease/node-1" || r.HotKeys[0].Revisions != 20 {
		t.Errorf("hot keys %+v", r.HotKeys)
	}

	table, stderr, code := run(t, "space", etcdFlag)
	if code != 0 || stderr != "" {
		t.Fatalf("table: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Alarms:\n", "   NOSPACE\n", "3.0 MiB (", "etcd alarm: NOSPACE on member " + m.ID} {
		if !strings.Contains(table, want) {
			t.Errorf("the table does not say %q:\n%s", want, table)
		}
	}

	fromSnap := spaceReport(t, "--top", "3", "--by", "namespace", "--snapshot", path)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if s := fromSnap.Snapshot; s == nil || s.Path != path || s.FileSize != info.Size() || s.Revision != st.GetHeader().GetRevision() || s.DBSizeInUse > s.DBSize || len(fromSnap.Members)+len(fromSnap.Alarms) != 0 {
		t.Errorf("the snapshot's figures %+v, members %v, alarms %v", fromSnap.Snapshot, fromSnap.Members, fromSnap.Alarms)
	}
	fromSnap.Snapshot, r.Members, r.Alarms = nil, nil, nil
	if a, b := fmt.Sprintf("%+v", fromSnap), fmt.Sprintf("%+v", r); a != b {
		t.Errorf("the snapshot's report:\n%s\nthe live one's:\n%s", a, b)
	}
	table, _, code = run(t, "space", "--snapshot", path)
	if code != 0 || !strings.Contains(table, "Snapshot (the file's own figures") {
		t.Errorf("the snapshot's table: exit %d:\n%s", code, table)
	}

	_, stderr, code = run(t, "space", "--revision", "3", etcdFlag)
	if code != 1 || stderr != "error: `--revision` is for get, keys, inspect, scan and why: space reports what etcd holds now, its history included\n" {
		t.Errorf("--revision: exit %d: %q", code, stderr)
	}
}
