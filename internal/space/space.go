package space

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"slices"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/etcdview/snapshot"
	"github.com/regctl/regctl/internal/gctune"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/stores"
	"github.com/regctl/regctl/internal/stores/usage"
)

// Formats are the output formats the report prints in.
var Formats = []render.Format{render.Table, render.YAML, render.JSON}

// ByNamespace is the one value of --by.
const ByNamespace = "namespace"

// DefaultTop is how many of the largest objects and hottest keys are
// listed.
const DefaultTop = 10

// DefaultPageSize is how many keys one range request reads: values are
// read to be measured, as a scan reads them.
const DefaultPageSize = 2500

// DefaultMaxHistory is how many revisions since its last compaction a live
// etcd's history may hold to be read. etcd sends a watch that catches up
// 1,000 revisions every 100 ms, and reads every revision from there to
// the current one each time (go.etcd.io/etcd/server/v3/storage/mvcc's
// watchable store, syncWatchers): 100,000 revisions take it about 10 s
// and a hundred reads of the history, a million 100 s and a thousand.
// kube-apiserver compacts every 5 minutes, which keeps most clusters'
// history well under it.
const DefaultMaxHistory = 100000

// Request is one `regctl space`.
type Request struct {
	Output render.Format
	// By splits the keys by "namespace" too, or "" for no split.
	By string
	// Top is how many of the largest objects and of the keys with the
	// most revisions are listed.
	Top int
	// ChunkSize is how many keys one etcd range request reads; 0 reads
	// every key in one request.
	ChunkSize int64
	// MaxHistory is how many revisions since its last compaction a live
	// etcd's history may hold to be read; 0 reads it whatever its
	// length. A snapshot's is always read: regctl serves it.
	MaxHistory int64
}

// Validate checks the request's flags; it needs no etcd.
func (r Request) Validate() error {
	if r.By != "" && r.By != ByNamespace {
		return fmt.Errorf("unknown `--by` %q: the one value is namespace", r.By)
	}
	if r.Top < 0 {
		return fmt.Errorf("`--top` must be 0 or more, not %d", r.Top)
	}
	if r.MaxHistory < 0 {
		return fmt.Errorf("`--max-history` must be 0 (no limit) or more, not %d", r.MaxHistory)
	}
	return stores.CheckChunkSize(r.ChunkSize)
}

// Space reports where the space of the etcd of ks went (of snap's file
// when it is a snapshot: nil for a live etcd), and prints the report on
// the streams' Out. A history too long to read is said on ErrOut.
func Space(ctx context.Context, ks handle.Keyspace, snap *snapshot.Snapshot, r Request, streams genericiooptions.IOStreams) error {
	report, err := Run(ctx, ks, snap, r)
	if err != nil {
		return err
	}
	for _, h := range report.History {
		if !h.Read {
			fmt.Fprintf(streams.ErrOut, "warning: etcd%s holds %d revisions since its last compaction (revision %d), more than `--max-history` %d: they are not read, and neither old revisions nor the keys with the most revisions are reported; etcd sends them to a watch 1000 every 100 ms, reading the rest of them each time: `--max-history 0` reads them all anyway, and compacting removes them (docs/space.md)\n",
				onServers(h.EtcdServers), h.Revision-h.Compacted, h.Compacted, r.MaxHistory)
		}
	}
	return render.Print(streams.Out, r.Output, report)
}

// onServers names an etcd of --etcd-servers-overrides in a sentence about
// it; the main etcd needs no name.
func onServers(servers []string) string {
	if len(servers) == 0 {
		return ""
	}
	return " " + strings.Join(servers, ",")
}

// etcd is one etcd the map's resources are stored on, and the key
// prefixes it holds.
type etcd struct {
	client  *clientv3.Client
	servers []string
	claims  *etcdview.Claims
}

// Run reads the figures of the report: each member's status and alarms
// (the snapshot's own figures for a snapshot), every key under the etcd
// prefix with its value, at one revision, and each etcd's history since
// its last compaction. It writes nothing.
func Run(ctx context.Context, ks handle.Keyspace, snap *snapshot.Snapshot, r Request) (*Report, error) {
	// What is live is a page of values, the top objects and the history's
	// count per key; the pages are garbage once counted.
	gctune.BoundHeap()
	holdings, err := usage.Holdings(ctx, ks.Client, ks.Handles)
	if err != nil {
		return nil, err
	}
	etcds := etcdsOf(usage.Root(ks.EtcdPrefix), holdings)
	report := &Report{EtcdPrefix: ks.EtcdPrefix}
	if err := report.readStatus(ctx, etcds, snap); err != nil {
		return nil, err
	}
	// The keys are read at the main etcd's revision, and its history up
	// to it.
	if report.Revision, err = etcdview.Revision(ctx, ks.Client); err != nil {
		return nil, err
	}
	t := newCounts(r, ks.Handles)
	usage, err := usage.Walk(ctx, ks.Client, ks.EtcdPrefix, ks.Handles, etcdview.UsageWalk{Revision: report.Revision, PageSize: r.ChunkSize, Visit: t.visit})
	if err != nil {
		return nil, err
	}
	for _, u := range usage {
		report.Keys += u.Keys
		report.Bytes += u.Bytes
		t.usage(u)
	}
	limit := r.MaxHistory
	if snap != nil {
		limit = 0 // served here: read at no cost to an etcd
	}
	for i, e := range etcds {
		until := report.Revision
		if i > 0 {
			if until, err = etcdview.Revision(ctx, e.client); err != nil {
				return nil, err
			}
		}
		h, hist, err := historyOf(ctx, e, until, limit)
		if err != nil {
			return nil, err
		}
		t.history(e, hist, &h)
		report.History = append(report.History, h)
	}
	t.fill(report)
	return report, nil
}

// readStatus reads etcd's own figures: the snapshot's, or each member's
// of each etcd, and the alarms they list.
func (report *Report) readStatus(ctx context.Context, etcds []etcd, snap *snapshot.Snapshot) error {
	if snap != nil {
		st, err := snap.Status()
		if err != nil {
			return err
		}
		report.Snapshot = &st
		return nil
	}
	for _, e := range etcds {
		members, err := etcdview.MemberStatuses(ctx, e.client)
		if err != nil {
			return err
		}
		report.Members = append(report.Members, members...)
		report.Alarms = append(report.Alarms, etcdview.AlarmsOf(members)...)
	}
	return nil
}

// counts add up the keys and the histories into the report's resources,
// namespaces, largest objects and hot keys.
type counts struct {
	top         int
	byNamespace bool
	// namespaced tells, by path, whether a resource's keys are in
	// namespaces.
	namespaced  map[string]bool
	largest     objects
	inNamespace map[string]map[string]*NamespaceResource
	// rows are the resources, by rowKey.
	rows map[string]*Resource
	hot  []HotKey
}

func newCounts(r Request, handles []*handle.Handle) *counts {
	t := &counts{top: r.Top, byNamespace: r.By == ByNamespace, namespaced: map[string]bool{},
		inNamespace: map[string]map[string]*NamespaceResource{}, rows: map[string]*Resource{}}
	for _, h := range handles {
		t.namespaced[h.Route.Path] = h.Resource.Namespaced
	}
	return t
}

// visit accounts for one key, counted in u.
func (t *counts) visit(kv *mvccpb.KeyValue, u *etcdview.Usage) error {
	size := int64(len(kv.Value))
	t.largest.add(Object{Key: string(kv.Key), Resource: u.Resource, Bytes: size}, t.top)
	if !t.byNamespace || !t.namespaced[u.Resource] {
		return nil
	}
	ns, _, _ := strings.Cut(strings.TrimPrefix(string(kv.Key), u.KeyPrefix), "/")
	byResource := t.inNamespace[ns]
	if byResource == nil {
		byResource = map[string]*NamespaceResource{}
		t.inNamespace[ns] = byResource
	}
	nr := byResource[u.Resource]
	if nr == nil {
		nr = &NamespaceResource{Resource: u.Resource}
		byResource[u.Resource] = nr
	}
	nr.Keys++
	nr.Bytes += size
	return nil
}

// usage is one resource's keys, or a group of unclaimed keys.
func (t *counts) usage(u etcdview.Usage) {
	if u.Keys == 0 {
		return
	}
	row := t.row(u.KeyPrefix, u.Resource, u.EtcdServers)
	row.Keys, row.Bytes = u.Keys, u.Bytes
}

// row is the resource of prefix on servers, made when it has none.
func (t *counts) row(prefix, resource string, servers []string) *Resource {
	k := rowKey(prefix, servers)
	row := t.rows[k]
	if row == nil {
		row = &Resource{Resource: resource, KeyPrefix: prefix, EtcdServers: servers}
		t.rows[k] = row
	}
	return row
}

// history accounts for the old revisions of e's history, h, by resource;
// those of keys outside the etcd prefix are counted apart.
func (t *counts) history(e etcd, hist *history, h *History) {
	for key, k := range hist.keys {
		revs, bytes := k.old()
		if revs == 0 {
			continue
		}
		prefix, resource := e.claims.Group(key)
		if prefix == "" {
			h.OutsideRevisions += revs
			h.OutsideBytes += bytes
			continue
		}
		row := t.row(prefix, resource, e.servers)
		row.OldRevisions += revs
		row.OldBytes += bytes
	}
	for _, k := range hist.hottest(t.top) {
		_, k.Resource = e.claims.Group(k.Key)
		t.hot = append(t.hot, k)
	}
}

// fill puts the counts in the report, each list in its order.
func (t *counts) fill(report *Report) {
	report.Resources = make([]Resource, 0, len(t.rows))
	for _, row := range t.rows {
		report.Resources = append(report.Resources, *row)
	}
	bySize(report.Resources, func(r Resource) int64 { return r.Bytes }, func(r Resource) string { return r.Resource + " " + r.KeyPrefix })
	report.Largest = t.largest.sorted()
	report.HotKeys = topHot(t.hot, t.top)
	if report.HotKeys == nil {
		report.HotKeys = []HotKey{}
	}
	if t.byNamespace {
		report.Namespaces = namespaces(t.inNamespace)
	}
}

// rowKey names the row of a key prefix on an etcd: the keys of a prefix
// that --etcd-servers-overrides moved are on their servers, and the keys
// left behind under it on the main etcd are unclaimed there.
func rowKey(prefix string, servers []string) string {
	return prefix + "\x00" + strings.Join(servers, ",")
}

// etcdsOf are the etcds of holdings, one per client, the main one first,
// with the prefixes each holds.
func etcdsOf(root string, holdings []usage.Holding) []etcd {
	var out []etcd
	claimed := map[*clientv3.Client]map[string]string{}
	for _, h := range holdings {
		if _, ok := claimed[h.Client]; !ok {
			claimed[h.Client] = map[string]string{}
			out = append(out, etcd{client: h.Client, servers: h.Servers})
		}
		for prefix, path := range h.Claimed {
			claimed[h.Client][prefix] = path
		}
	}
	for i := range out {
		out[i].claims = etcdview.NewClaims(root, claimed[out[i].client])
	}
	return out
}

// historyOf reads what e holds of its past up to revision until: every
// change since its last compaction, unless there are more revisions than
// limit (0: no limit).
func historyOf(ctx context.Context, e etcd, until, limit int64) (History, *history, error) {
	oldest, err := etcdview.OldestRevision(ctx, e.client)
	if err != nil {
		return History{}, nil, err
	}
	hist := newHistory()
	if limit > 0 && until-oldest > limit {
		return History{EtcdServers: e.servers, Revision: until, Compacted: oldest}, hist, nil
	}
	err = etcdview.Changes(ctx, e.client, oldest+1, until, func(ev *clientv3.Event) error {
		hist.add(ev)
		return nil
	})
	if err != nil {
		return History{}, nil, err
	}
	h := History{EtcdServers: e.servers, Revision: until, Compacted: oldest, Read: true}
	for _, k := range hist.keys {
		revs, bytes := k.old()
		h.OldRevisions += revs
		h.OldBytes += bytes
	}
	return h, hist, nil
}

// namespaces are the namespaces' figures, most bytes first.
func namespaces(in map[string]map[string]*NamespaceResource) []Namespace {
	out := make([]Namespace, 0, len(in))
	for name, byResource := range in {
		ns := Namespace{Namespace: name}
		for _, nr := range byResource {
			ns.Keys += nr.Keys
			ns.Bytes += nr.Bytes
			ns.Resources = append(ns.Resources, *nr)
		}
		bySize(ns.Resources, func(r NamespaceResource) int64 { return r.Bytes }, func(r NamespaceResource) string { return r.Resource })
		out = append(out, ns)
	}
	bySize(out, func(n Namespace) int64 { return n.Bytes }, func(n Namespace) string { return n.Namespace })
	return out
}

// objects keeps the largest objects seen: a heap whose root is the
// smallest kept, the first to give way.
type objects []Object

// add keeps o if it is among the n largest seen.
func (h *objects) add(o Object, n int) {
	if n == 0 {
		return
	}
	if len(*h) < n {
		heap.Push(h, o)
		return
	}
	if smaller((*h)[0], o) {
		(*h)[0] = o
		heap.Fix(h, 0)
	}
}

// sorted are the objects kept, largest first.
func (h *objects) sorted() []Object {
	out := slices.Clone(*h)
	slices.SortFunc(out, func(a, b Object) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(a.Key, b.Key))
	})
	if out == nil {
		out = []Object{}
	}
	return out
}

// smaller tells whether a gives way to b: it is smaller, or as large and
// after it by key.
func smaller(a, b Object) bool {
	return a.Bytes < b.Bytes || a.Bytes == b.Bytes && a.Key > b.Key
}

func (h objects) Len() int           { return len(h) }
func (h objects) Less(i, j int) bool { return smaller(h[i], h[j]) }
func (h objects) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *objects) Push(x any)        { *h = append(*h, x.(Object)) }
func (h *objects) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
