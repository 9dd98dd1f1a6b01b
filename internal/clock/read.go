package clock

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/apis/coordination"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/stores"
)

// Sample is one clock of the keyspace: a revision, and the time its write
// carries, as the holder of a Lease read it on its own clock when it
// renewed (its spec.renewTime, or acquireTime when it took the lease).
type Sample struct {
	Revision int64     `json:"revision"`
	Time     time.Time `json:"time"`
	// Clock names what told the time: the Lease renewed.
	Clock string `json:"clock"`
}

// Clocks are the samples of the revisions etcd holds.
type Clocks struct {
	// Oldest is the oldest revision etcd holds (its last compaction, or
	// 1), Current the revision the history was read up to.
	Oldest, Current int64
	// Floor is the latest time read from the Leases held at Oldest, all
	// written then or before: Oldest was written at that time or after.
	// Nil when no Lease was held then.
	Floor *Sample
	// Samples are the renewals after Oldest (or at it, a Lease created
	// there), in revision order, each time no earlier than the one before.
	Samples []Sample
	// SetAside counts the renewals whose time read earlier than a clock
	// before them: a holder whose clock is behind, or a Lease written back
	// with an old renewTime (a restore). Their revisions are later than
	// their times, and would be told for times they were not yet written.
	SetAside int
	// Unreadable counts the Lease values that could not be decoded, and
	// Problem says why the first could not.
	Unreadable int
	Problem    string
}

// LeasesPath is the path of the map the clocks are read through.
const LeasesPath = "leases.coordination.k8s.io"

// pageSize is how many Leases a page of the values at Oldest holds: a
// cluster has one per node and a few more.
const pageSize = 500

// Read reads the clocks of the keyspace from every Lease's history that
// etcd holds, through the leases handle h: the values held at the oldest
// revision, then each change after it up to now, in one watch of the
// leases' key prefix (etcdview.PrefixHistory), each value decoded and
// decrypted by the store's codec and transformer. A renewal is a sample
// when its write set the time it carries: the Lease was created there, or
// its time is newer than the Lease's before it (an update that left it,
// such as a label's, tells nothing of when it was written). Nothing is
// written.
func Read(ctx context.Context, h *handle.Handle) (*Clocks, error) {
	if len(h.Route.EtcdServers) > 0 {
		return nil, fmt.Errorf("%s are kept on other etcd servers (%s, `--etcd-servers-overrides`), whose revisions are not those of `--etcd-servers`: name a revision by its number", LeasesPath, strings.Join(h.Route.EtcdServers, ","))
	}
	h, err := h.Serving()
	if err != nil {
		return nil, err
	}
	prefix, err := h.KeyPrefix("")
	if err != nil {
		return nil, err
	}
	c, err := h.Client(ctx)
	if err != nil {
		return nil, err
	}
	reader, err := stores.NewValueReader(handle.Target{Handle: h})
	if err != nil {
		return nil, err
	}
	clocks := &Clocks{}
	// last is each Lease's time as of the last value read, by key.
	last := map[string]time.Time{}
	var candidates []Sample
	clocks.Oldest, clocks.Current, err = etcdview.PrefixHistory(ctx, c, prefix, pageSize, func(ev etcdview.KeyEvent) error {
		if ev.Deleted {
			delete(last, ev.Key)
			return nil
		}
		obj, err := reader.Decode(ctx, &mvccpb.KeyValue{Key: []byte(ev.Key), Value: ev.Value, ModRevision: ev.Revision, CreateRevision: ev.CreateRevision})
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			if clocks.Unreadable++; clocks.Problem == "" {
				clocks.Problem = err.Error()
			}
			return nil
		}
		lease, ok := obj.(*coordination.Lease)
		if !ok {
			return fmt.Errorf("regctl bug: %s holds a %T, not a Lease", ev.Key, obj)
		}
		t := leaseTime(lease)
		before, known := last[ev.Key]
		last[ev.Key] = t
		if t.IsZero() {
			return nil
		}
		sample := Sample{Revision: ev.Revision, Time: t, Clock: "Lease " + lease.Namespace + "/" + lease.Name}
		created := ev.CreateRevision == ev.Revision
		switch {
		case ev.Held && (!created || ev.ReadAt > ev.Revision):
			// Written at the oldest revision or before, by a write that
			// may not have set its time (the value before is gone), or at
			// a revision etcd no longer holds: a time that the oldest
			// revision was written at or after.
			if clocks.Floor == nil || t.After(clocks.Floor.Time) {
				clocks.Floor = &sample
			}
		case created || known && t.After(before):
			candidates = append(candidates, sample)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the clocks of the keyspace (the history of %s): %w", LeasesPath, err)
	}
	clocks.keep(candidates)
	return clocks, nil
}

// keep keeps the candidates whose times never go back from the floor and
// the sample before them; the rest are set aside. A time a sample keeps is
// then never later than its revision's write (given one right clock
// before it), so a revision told for a time is never one written after it.
func (c *Clocks) keep(candidates []Sample) {
	var latest time.Time
	if c.Floor != nil {
		latest = c.Floor.Time
	}
	for _, s := range candidates {
		if s.Time.Before(latest) {
			c.SetAside++
			continue
		}
		c.Samples = append(c.Samples, s)
		latest = s.Time
	}
}

// leaseTime is the time a Lease's holder wrote in it, the later of its
// renewTime and acquireTime; zero when it holds neither.
func leaseTime(l *coordination.Lease) time.Time {
	var t time.Time
	for _, m := range []*metav1.MicroTime{l.Spec.RenewTime, l.Spec.AcquireTime} {
		if m != nil && m.After(t) {
			t = m.Time
		}
	}
	return t
}
