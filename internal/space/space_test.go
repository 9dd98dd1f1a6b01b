package space

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/storage/schema"
	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/etcdview/embedded"
	"github.com/regctl/regctl/internal/etcdview/etcdtest"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/logs/logstest"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
)

func TestMain(m *testing.M) { logstest.Main(m) }

// open opens the map of a default server on the etcd at url (a snapshot
// file with snapshot), and returns its keyspace.
func open(t *testing.T, url, snapshot string) (*storagemap.Session, handle.Keyspace) {
	t.Helper()
	opts := serverflags.NewOptions()
	if url != "" {
		opts.Server.Etcd.StorageConfig.Transport.ServerList = []string{url}
	}
	s, ks, err := storagemap.OpenAll(context.Background(), storagemap.Config{Options: opts, Timeout: 10 * time.Second, Snapshot: snapshot})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, ks
}

// status is etcd's own status answer of the member at endpoint.
func status(t *testing.T, c *clientv3.Client, endpoint string) *etcdserverpb.StatusResponse {
	t.Helper()
	answer, err := c.Status(context.Background(), endpoint)
	if err != nil {
		t.Fatal(err)
	}
	return (*etcdserverpb.StatusResponse)(answer)
}

// settle has etcd commit what it has written to its database, as it does
// before it sends a snapshot: its status then stays put until the next
// write.
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

func revisionOf(t *testing.T, c *clientv3.Client) int64 {
	t.Helper()
	rev, err := etcdview.Revision(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

// write fills an etcd with keys of several resources, in several
// namespaces, a key no path stores and one outside the etcd prefix, a
// hot key, deletions, and a compaction in the middle of it all.
func write(t *testing.T, c *clientv3.Client) {
	t.Helper()
	ctx := context.Background()
	put := func(k string, size int) int64 {
		resp, err := c.Put(ctx, k, strings.Repeat("v", size))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Header.Revision
	}
	for i := range 12 {
		put(fmt.Sprintf("/registry/configmaps/ns%d/cm%02d", i%3, i), 100+10*i)
		put(fmt.Sprintf("/registry/secrets/ns%d/s%02d", i%2, i), 300+i)
	}
	put("/registry/namespaces/ns0", 50)
	put("/registry/namespaces/ns1", 50)
	put("/registry/minions/node-1", 2000)
	put("/registry/services/specs/ns0/web", 400)
	put("/registry/services/endpoints/ns0/web", 400)
	put("/registry/widgets.example.com/ns0/w", 700) // no CRD claims it
	put("/other/app/key", 5000)                     // outside --etcd-prefix
	for i := range 6 {
		put("/registry/leases/kube-node-lease/node-1", 150+i)
	}
	compactAt := put("/registry/events/ns0/e1", 250)
	if _, err := c.Compact(ctx, compactAt, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	for i := range 25 {
		put("/registry/leases/kube-node-lease/node-1", 160+i)
	}
	for i := range 4 {
		put("/other/app/key", 5000+i)
	}
	if _, err := c.Delete(ctx, "/registry/events/ns0/e1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Delete(ctx, "/registry/configmaps/ns0/cm00"); err != nil {
		t.Fatal(err)
	}
	put("/registry/configmaps/ns0/cm00", 90)
	put("/registry/configmaps/ns1/cm01", 1500)
}

// tally is what a plain read of every key under prefix counts.
type tally struct{ keys, bytes int64 }

func tallyOf(t *testing.T, c *clientv3.Client, prefix string) tally {
	t.Helper()
	resp, err := c.Get(context.Background(), prefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	var out tally
	for _, kv := range resp.Kvs {
		out.keys++
		out.bytes += int64(len(kv.Value))
	}
	return out
}

// TestSpaceOfAnEtcd reports on an etcd written with a history: the
// members' figures are etcd's own status; each resource's keys and bytes
// are what a plain read of its prefix counts, and so are each namespace's;
// the largest objects are the largest values, in order; the hot key is
// the one written most; and nothing is written.
func TestSpaceOfAnEtcd(t *testing.T) {
	ctx := context.Background()
	e, c := etcdtest.Start(t)
	write(t, c)
	_, ks := open(t, e.ClientURL, "")
	settle(t, c)
	before := status(t, c, e.ClientURL)
	report, err := Run(ctx, ks, nil, Request{By: ByNamespace, Top: 5, ChunkSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	st := status(t, c, e.ClientURL)
	if st.GetHeader().GetRevision() != before.GetHeader().GetRevision() || st.GetRaftIndex() != before.GetRaftIndex() {
		t.Errorf("the report moved etcd's revision from %d to %d, its raft index from %d to %d",
			before.GetHeader().GetRevision(), st.GetHeader().GetRevision(), before.GetRaftIndex(), st.GetRaftIndex())
	}
	if len(report.Members) != 1 {
		t.Fatalf("members %+v", report.Members)
	}
	m := report.Members[0]
	if m.ID != etcdview.MemberID(st.GetHeader().GetMemberId()) || m.DBSize != st.GetDbSize() || m.DBSizeInUse != st.GetDbSizeInUse() ||
		m.Quota != st.GetDbSizeQuota() || !m.Leader || m.Revision != st.GetHeader().GetRevision() || m.Version != st.GetVersion() {
		t.Errorf("member %+v, etcd's status %v", m, st)
	}
	if len(report.Alarms) != 0 || report.Snapshot != nil {
		t.Errorf("alarms %v, snapshot %v", report.Alarms, report.Snapshot)
	}

	// Resources: each as a plain read of its prefix counts it, and
	// together every key under the prefix.
	var sum tally
	byPrefix := map[string]Resource{}
	for _, r := range report.Resources {
		byPrefix[r.KeyPrefix] = r
		if got, want := (tally{r.Keys, r.Bytes}), tallyOf(t, c, r.KeyPrefix); got != want {
			t.Errorf("%s %s: %+v, a plain read counts %+v", r.Resource, r.KeyPrefix, got, want)
		}
		sum.keys += r.Keys
		sum.bytes += r.Bytes
	}
	if all := tallyOf(t, c, "/registry/"); sum != all || report.Keys != all.keys || report.Bytes != all.bytes {
		t.Errorf("resources add up to %+v, the report says %d keys %d bytes, a plain read counts %+v", sum, report.Keys, report.Bytes, all)
	}
	for prefix, resource := range map[string]string{
		"/registry/configmaps/": "configmaps", "/registry/minions/": "nodes", "/registry/services/specs/": "services",
		"/registry/services/endpoints/": "endpoints", "/registry/widgets.example.com/": "",
	} {
		if r, ok := byPrefix[prefix]; !ok || r.Resource != resource {
			t.Errorf("%s: %+v, want it counted for %q", prefix, r, resource)
		}
	}
	if !slices.IsSortedFunc(report.Resources, func(a, b Resource) int { return cmp.Compare(b.Bytes, a.Bytes) }) {
		t.Errorf("resources are not by bytes, most first: %+v", report.Resources)
	}

	// Namespaces: the namespaced resources' keys in each.
	want := map[string]tally{}
	resp, err := c.Get(ctx, "/registry/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range resp.Kvs {
		key := string(kv.Key)
		for _, p := range []string{"/registry/configmaps/", "/registry/secrets/", "/registry/services/specs/", "/registry/services/endpoints/", "/registry/leases/"} {
			if ns, _, ok := strings.Cut(strings.TrimPrefix(key, p), "/"); ok && strings.HasPrefix(key, p) {
				w := want[ns]
				w.keys++
				w.bytes += int64(len(kv.Value))
				want[ns] = w
			}
		}
	}
	got := map[string]tally{}
	for _, ns := range report.Namespaces {
		got[ns.Namespace] = tally{ns.Keys, ns.Bytes}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("namespaces %v, a plain read counts %v", got, want)
	}
	if n := report.Namespaces[0]; n.Namespace != "ns1" || n.Resources[0].Resource != "configmaps" {
		t.Errorf("the namespace with the most bytes: %+v, want ns1 and its config maps first", n)
	}

	// The largest objects: the five largest values under the prefix.
	var values []Object
	for _, kv := range resp.Kvs {
		values = append(values, Object{Key: string(kv.Key), Bytes: int64(len(kv.Value))})
	}
	slices.SortFunc(values, func(a, b Object) int { return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(a.Key, b.Key)) })
	var largest []string
	for _, o := range report.Largest {
		largest = append(largest, fmt.Sprintf("%s %d", o.Key, o.Bytes))
	}
	var wantLargest []string
	for _, o := range values[:5] {
		wantLargest = append(wantLargest, fmt.Sprintf("%s %d", o.Key, o.Bytes))
	}
	if !slices.Equal(largest, wantLargest) || report.Largest[0].Resource != "nodes" {
		t.Errorf("largest %v (%+v), want %v", largest, report.Largest, wantLargest)
	}

	// The hot key: written 6 times before the compaction, of which etcd
	// keeps the last, and 25 after.
	hot := report.HotKeys[0]
	if hot.Key != "/registry/leases/kube-node-lease/node-1" || hot.Resource != "leases.coordination.k8s.io" || hot.Revisions != 26 || hot.Deleted {
		t.Errorf("the hottest key: %+v", hot)
	}
	if k := report.HotKeys[1]; k.Key != "/other/app/key" || k.Resource != "" || k.Revisions != 5 {
		t.Errorf("the second hottest key: %+v, want the key outside the prefix", k)
	}
	if !slices.IsSortedFunc(report.HotKeys, func(a, b HotKey) int { return cmp.Compare(b.Revisions, a.Revisions) }) {
		t.Errorf("hot keys are not by revisions, most first: %+v", report.HotKeys)
	}
	// A deleted key's revisions go in a compaction, its deletion too; a
	// key deleted and created again keeps its last value.
	events := byPrefix["/registry/events/"]
	if events.Keys != 0 || events.OldRevisions != 2 || events.OldBytes != 250 {
		t.Errorf("events, whose one key is deleted: %+v", events)
	}
	leases := byPrefix["/registry/leases/"]
	if leases.OldRevisions != 25 || leases.Keys != 1 {
		t.Errorf("leases: %+v", leases)
	}
	// The history's old revisions are the resources', and those of the
	// key outside the prefix.
	h := report.History[0]
	var old, oldBytes int64
	for _, r := range report.Resources {
		old += r.OldRevisions
		oldBytes += r.OldBytes
	}
	if h.OutsideRevisions != 4 || h.OutsideBytes != 5000+5000+5001+5002 || h.OldRevisions != old+h.OutsideRevisions || h.OldBytes != oldBytes+h.OutsideBytes {
		t.Errorf("history %+v; the resources' old revisions: %d holding %d bytes", h, old, oldBytes)
	}
}

// storedRevisions counts the revisions the key bucket of the snapshot at
// path holds, and the bytes of their values: what etcd stores.
func storedRevisions(t *testing.T, path string) (revisions, values int64) {
	t.Helper()
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(schema.Key.Name()).ForEach(func(_, v []byte) error {
			revisions++
			// A stored mvccpb.KeyValue: its value is field 5.
			for len(v) > 0 {
				num, typ, n := protowire.ConsumeTag(v)
				v = v[n:]
				m := protowire.ConsumeFieldValue(num, typ, v)
				if num == 5 {
					value, _ := protowire.ConsumeBytes(v)
					values += int64(len(value))
				}
				v = v[m:]
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return revisions, values
}

// TestWhatACompactionFrees compacts an etcd to its revision after the
// report: the revisions and value bytes its key bucket loses are those
// the report's history said a compaction would remove. The report of a
// snapshot saved before says the same as the live one.
func TestWhatACompactionFrees(t *testing.T) {
	ctx := context.Background()
	e, c := etcdtest.Start(t)
	write(t, c)
	_, ks := open(t, e.ClientURL, "")
	live, err := Run(ctx, ks, nil, Request{Top: 3, ChunkSize: DefaultPageSize})
	if err != nil {
		t.Fatal(err)
	}
	h := live.History[0]
	if h.Revision != revisionOf(t, c) || h.Compacted == 1 || h.OldRevisions == 0 {
		t.Fatalf("history %+v", h)
	}
	dir := t.TempDir()
	before := filepath.Join(dir, "before.db")
	saveSnapshot(t, c, before)
	if _, err := c.Compact(ctx, h.Revision, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	after := filepath.Join(dir, "after.db")
	saveSnapshot(t, c, after)
	revsBefore, bytesBefore := storedRevisions(t, before)
	revsAfter, bytesAfter := storedRevisions(t, after)
	if revsBefore-revsAfter != h.OldRevisions || bytesBefore-bytesAfter != h.OldBytes {
		t.Errorf("the compaction removed %d revisions holding %d bytes of values; the report said %d and %d",
			revsBefore-revsAfter, bytesBefore-bytesAfter, h.OldRevisions, h.OldBytes)
	}

	s, snapKS := open(t, "", before)
	fromSnap, err := Run(ctx, snapKS, s.Snapshot, Request{Top: 3, ChunkSize: DefaultPageSize})
	if err != nil {
		t.Fatal(err)
	}
	if fromSnap.Snapshot == nil || fromSnap.Snapshot.Path != before || fromSnap.Snapshot.Revision != h.Revision || len(fromSnap.Members) != 0 {
		t.Errorf("a snapshot's own figures: %+v, members %+v", fromSnap.Snapshot, fromSnap.Members)
	}
	// The rest is the same as live.
	fromSnap.Snapshot, live.Members = nil, nil
	if a, b := asJSON(t, fromSnap), asJSON(t, live); a != b {
		t.Errorf("the snapshot's report:\n%s\nthe live one's:\n%s", a, b)
	}
}

func asJSON(t *testing.T, r *Report) string {
	t.Helper()
	var out bytes.Buffer
	if err := render.Print(&out, render.JSON, r); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func saveSnapshot(t *testing.T, c *clientv3.Client, path string) {
	t.Helper()
	r, err := c.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(r); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestSpaceOfAnEtcdOverItsQuota fills an etcd with a tiny quota until it
// refuses writes: the report, read on it with its alarm raised, shows the
// alarm, the quota full, and the config maps that filled it.
func TestSpaceOfAnEtcdOverItsQuota(t *testing.T) {
	ctx := context.Background()
	const quota = 2 << 20
	e, c := etcdtest.Start(t, embedded.WithQuota(quota))
	value := strings.Repeat("x", 64<<10)
	for i := 0; ; i++ {
		_, err := c.Put(ctx, fmt.Sprintf("/registry/configmaps/big/cm%04d", i), value)
		if etcdview.NoSpace(err) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	_, ks := open(t, e.ClientURL, "")
	before := status(t, c, e.ClientURL)
	report, err := Run(ctx, ks, nil, Request{Top: 2, ChunkSize: DefaultPageSize})
	if err != nil {
		t.Fatal(err)
	}
	if after := status(t, c, e.ClientURL); after.GetHeader().GetRevision() != before.GetHeader().GetRevision() || after.GetRaftIndex() != before.GetRaftIndex() {
		t.Errorf("the report moved etcd's revision from %d to %d, its raft index from %d to %d",
			before.GetHeader().GetRevision(), after.GetHeader().GetRevision(), before.GetRaftIndex(), after.GetRaftIndex())
	}
	m := report.Members[0]
	if want := []etcdview.Alarm{{Member: m.ID, Alarm: "NOSPACE"}}; !slices.Equal(report.Alarms, want) {
		t.Errorf("alarms %v, want %v", report.Alarms, want)
	}
	if m.Quota != quota || report.Resources[0].Resource != "configmaps" || report.Largest[0].Bytes != int64(len(value)) {
		t.Errorf("member %+v, resources %+v, largest %+v", m, report.Resources, report.Largest)
	}
	var out bytes.Buffer
	if err := render.Print(&out, render.Table, report); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Alarms:\n",
		m.ID + "   " + e.ClientURL + "   NOSPACE\n",
		"2.0 MiB (",
		"etcd alarm: NOSPACE on member " + m.ID + ": etcd refuses every write but deletes",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table does not say %q:\n%s", want, out.String())
		}
	}
}

// TestALongHistoryIsNotRead: a live etcd's history of more revisions than
// MaxHistory is left unread, which the report and a warning say; a
// snapshot's is read all the same.
func TestALongHistoryIsNotRead(t *testing.T) {
	ctx := context.Background()
	e, c := etcdtest.Start(t)
	write(t, c)
	_, ks := open(t, e.ClientURL, "")
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}
	if err := Space(ctx, ks, nil, Request{Output: render.Table, Top: 3, MaxHistory: 5}, streams); err != nil {
		t.Fatal(err)
	}
	h := status(t, c, e.ClientURL).GetHeader().GetRevision()
	oldest, err := etcdview.OldestRevision(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("warning: etcd holds %d revisions since its last compaction (revision %d), more than `--max-history` 5: they are not read", h-oldest, oldest)
	if !strings.HasPrefix(errOut.String(), want) || strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("stderr %q, want one line starting %q", errOut.String(), want)
	}
	for _, want := range []string{"   not read        not read\n", "   -               -\n", "they were not read (`--max-history`)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table does not say %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "Keys with the most revisions held:") {
		t.Errorf("hot keys listed from a history not read:\n%s", out.String())
	}
	report, err := Run(ctx, ks, nil, Request{Top: 3, MaxHistory: 5})
	if err != nil {
		t.Fatal(err)
	}
	if r := report.History[0]; r.Read || r.OldRevisions != 0 || len(report.HotKeys) != 0 {
		t.Errorf("history %+v, hot keys %v", r, report.HotKeys)
	}

	path := filepath.Join(t.TempDir(), "snapshot.db")
	saveSnapshot(t, c, path)
	s, snapKS := open(t, "", path)
	fromSnap, err := Run(ctx, snapKS, s.Snapshot, Request{Top: 3, MaxHistory: 5})
	if err != nil {
		t.Fatal(err)
	}
	if r := fromSnap.History[0]; !r.Read || r.OldRevisions == 0 || len(fromSnap.HotKeys) != 3 {
		t.Errorf("the snapshot's history %+v, hot keys %v: want it read", r, fromSnap.HotKeys)
	}
}
