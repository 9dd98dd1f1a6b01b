package etcdview

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// KeyEvent is one change of a key that etcd still holds: a value written
// at Revision, or the key's deletion at Revision.
type KeyEvent struct {
	Key      string
	Revision int64
	Deleted  bool
	// CreateRevision is when the key was created, for a value: equal to
	// Revision for the write that created it.
	CreateRevision int64
	// Value is the stored value, nil for a deletion.
	Value []byte
	// ReadAt is the revision the value can be read at: Revision, but for
	// a value written before the last compaction, the compaction
	// revision, where it was still the key's value.
	ReadAt int64
	// Held marks a value read at the oldest revision etcd holds, rather
	// than a change watched after it: written then or before, by a write
	// whose previous value may be compacted away.
	Held bool
}

// progressEvery is how often a history asks etcd whether its watch has
// caught up: etcd answers only once the watch has sent every older event.
const progressEvery = 20 * time.Millisecond

// KeyHistory is every change of key that etcd still holds, oldest first:
// the value live at the oldest readable revision, if any, then each write
// and deletion after it up to the current revision. It reads the value,
// then watches the key from the next revision until etcd says the watch
// has caught up with the revision read first; neither writes anything.
func KeyHistory(ctx context.Context, c *clientv3.Client, key string) ([]KeyEvent, error) {
	current, err := Revision(ctx, c)
	if err != nil {
		return nil, err
	}
	oldest, err := OldestRevision(ctx, c)
	if err != nil {
		return nil, err
	}
	var events []KeyEvent
	kv, err := ValueAt(ctx, c, key, oldest)
	if err != nil {
		return nil, err
	}
	if kv != nil {
		events = append(events, heldAt(kv, oldest))
	}
	if oldest == current {
		return events, nil
	}
	err = watchUntil(ctx, c, key, oldest+1, current, func(ev KeyEvent) error {
		events = append(events, ev)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the history of %s: %w", key, err)
	}
	return events, nil
}

// PrefixHistory is KeyHistory for every key under prefix, handed to fn one
// at a time rather than collected: the values at the oldest revision etcd
// holds, in key order, read a page of pageSize at a time, then each write
// and deletion after it up to the current revision, in revision order. It
// returns those two revisions. A history of many keys (every renewal of
// every Lease) is so read with memory for a page or a watch response, and
// with one watch of the whole prefix, not one per key. Nothing is written.
func PrefixHistory(ctx context.Context, c *clientv3.Client, prefix string, pageSize int64, fn func(KeyEvent) error) (oldest, current int64, err error) {
	if current, err = Revision(ctx, c); err != nil {
		return 0, 0, err
	}
	if oldest, err = OldestRevision(ctx, c); err != nil {
		return 0, 0, err
	}
	err = PagesAt(ctx, c, prefix, prefix, oldest, pageSize, false, func(kvs []*mvccpb.KeyValue) error {
		for _, kv := range kvs {
			if err := fn(heldAt(kv, oldest)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("reading the values under %s at revision %d: %w", prefix, oldest, err)
	}
	if oldest == current {
		return oldest, current, nil
	}
	if err := watchUntil(ctx, c, prefix, oldest+1, current, fn, clientv3.WithPrefix()); err != nil {
		return 0, 0, fmt.Errorf("reading the history of the keys under %s: %w", prefix, err)
	}
	return oldest, current, nil
}

// heldAt is the event of a value read at revision oldest, the oldest etcd
// holds: it was written then or before.
func heldAt(kv *mvccpb.KeyValue, oldest int64) KeyEvent {
	return KeyEvent{Key: string(kv.Key), Revision: kv.ModRevision, CreateRevision: kv.CreateRevision, Value: kv.Value, ReadAt: max(kv.ModRevision, oldest), Held: true}
}

// watchUntil hands fn the changes of key (with opts, of the keys opts
// name) from revision from to until.
func watchUntil(ctx context.Context, c *clientv3.Client, key string, from, until int64, fn func(KeyEvent) error, opts ...clientv3.OpOption) error {
	return watchThrough(ctx, c, key, opts, from, until, func(ev *clientv3.Event) error { return fn(keyEvent(ev)) })
}

// Changes calls fn with every change etcd holds of its whole keyspace
// from revision from to until, oldest first, each with the value it
// replaced or deleted (PrevKv, nil for a key's first value): the history a
// compaction at until would drop all but the last value of each key of.
// It watches, which writes nothing; etcd reads each replaced value for
// the watch, so this costs it about two reads of every change.
func Changes(ctx context.Context, c *clientv3.Client, from, until int64, fn func(*clientv3.Event) error) error {
	if from > until {
		return nil
	}
	err := watchThrough(ctx, c, "\x00", []clientv3.OpOption{clientv3.WithFromKey(), clientv3.WithPrevKV()}, from, until, fn)
	if errors.Is(err, rpctypes.ErrCompacted) {
		return fmt.Errorf("reading etcd's history from revision %d: etcd compacted it meanwhile (as kube-apiserver does every 5 minutes): run again", from)
	}
	if err != nil {
		return fmt.Errorf("reading etcd's history from revision %d: %w", from, err)
	}
	return nil
}

// watchThrough calls fn with the changes of key (a range, with opts) from
// revision from to until. A progress notification that reaches until
// says every change up to it has been sent: etcd sends one only to a
// watch that has caught up.
func watchThrough(ctx context.Context, c *clientv3.Client, key string, opts []clientv3.OpOption, from, until int64, fn func(*clientv3.Event) error) error {
	ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	ch := c.Watch(ctx, key, append([]clientv3.OpOption{clientv3.WithRev(from), clientv3.WithCreatedNotify()}, opts...)...)
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	// A watch is no request of its own: --request-timeout bounds the
	// silence between two of its answers.
	timeout := requestTimeout(c)
	silence := newSilence(timeout)
	defer silence.Stop()
	for {
		select {
		case <-silence.C:
			return fmt.Errorf("etcd did not answer the watch within %s (`--request-timeout`)", timeout)
		case <-tick.C:
			if err := c.RequestProgress(ctx); err != nil {
				return err
			}
			continue
		case resp, open := <-ch:
			if !open && ctx.Err() != nil {
				return context.Cause(ctx)
			}
			if !open {
				return fmt.Errorf("etcd ended the watch before revision %d", until)
			}
			if err := resp.Err(); err != nil {
				return err
			}
			for _, ev := range resp.Events {
				if ev.Kv.ModRevision > until {
					return nil
				}
				if err := fn(ev); err != nil {
					return err
				}
			}
			if resp.IsProgressNotify() && resp.Header.Revision >= until {
				return nil
			}
			if timeout > 0 {
				silence.Reset(timeout)
			}
		}
	}
}

// newSilence is a timer of timeout, one that never fires for 0 (no
// timeout, as in kubectl).
func newSilence(timeout time.Duration) *time.Timer {
	if timeout > 0 {
		return time.NewTimer(timeout)
	}
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}

func keyEvent(ev *clientv3.Event) KeyEvent {
	if ev.Type == mvccpb.DELETE {
		return KeyEvent{Key: string(ev.Kv.Key), Revision: ev.Kv.ModRevision, Deleted: true, ReadAt: ev.Kv.ModRevision}
	}
	return KeyEvent{Key: string(ev.Kv.Key), Revision: ev.Kv.ModRevision, CreateRevision: ev.Kv.CreateRevision, Value: ev.Kv.Value, ReadAt: ev.Kv.ModRevision}
}
