package listwatch

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/stores"
)

// Options select the changes a watch reports and where it starts.
type Options struct {
	LabelSelector string
	FieldSelector string
	// ResourceVersion is the etcd revision the watch starts after: only
	// changes of later revisions are reported. "0" first reports every
	// current object as ADDED, as the apiserver's watch from 0 does; empty
	// starts at etcd's current revision.
	ResourceVersion string
	// OnError is told about an event that cannot be shown (a deletion
	// whose object etcd did not send); the watch goes on. Without it, such
	// an event ends the watch.
	OnError func(err error)
	// OnLost is told each time the connection to etcd is lost; the watch
	// reconnects and goes on from where it stopped.
	OnLost func()
}

// TooOldError ends a watch whose start lies before etcd's last compaction:
// the changes since then are gone.
type TooOldError struct {
	Path            string
	ResourceVersion string
	Err             error
}

func (e *TooOldError) Error() string {
	return fmt.Sprintf("watching %s: the resourceVersion %s is too old: etcd has compacted the changes after it", e.Path, e.ResourceVersion)
}

func (e *TooOldError) Unwrap() error { return e.Err }

// Watch follows the target's changes through its store's own Watch (the
// server's predicates and key functions, on the undecorated etcd3 storage,
// so events are what etcd sends, with no watch cache) and hands each to fn,
// with its object in the store's internal version. It returns when ctx ends
// (ctx.Err()), fn fails, or the watch ends with an error. It writes
// nothing to etcd: no bookmarks or progress requests are asked for.
func Watch(ctx context.Context, t handle.Target, opts Options, fn func(watch.Event) error) error {
	watcher, ok := t.Storage.(rest.Watcher)
	if !ok {
		return fmt.Errorf("%s cannot be watched", t.Path)
	}
	lo, err := stores.InternalListOptions(t, stores.ListOptions{LabelSelector: opts.LabelSelector, FieldSelector: opts.FieldSelector})
	if err != nil {
		return err
	}
	if opts.ResourceVersion == "" {
		if opts.ResourceVersion, err = Revision(ctx, t); err != nil {
			return err
		}
	}
	lo.Watch = true
	lo.ResourceVersion = opts.ResourceVersion
	// Upstream's tests set KUBE_PANIC_WATCH_DECODE_ERROR, which makes a
	// value that cannot be decoded panic the process, in a goroutine no
	// recover reaches. regctl wants the error event the server sends.
	watchDecodeErrorsAsEvents()
	ctx, cancel := context.WithCancel(stores.RequestContext(ctx, t))
	defer cancel()
	if opts.OnLost != nil {
		c, err := t.Client(ctx)
		if err != nil {
			return err
		}
		go etcdview.OnLost(ctx, c, opts.OnLost)
	}
	wi, err := watcher.Watch(ctx, lo)
	if err != nil {
		return fmt.Errorf("watching %s: %w", t.Path, err)
	}
	defer wi.Stop()
	return follow(ctx, t, wi, opts, fn)
}

// follow hands the watch's events to fn until it ends; last is the
// resourceVersion reached, for the errors.
func follow(ctx context.Context, t handle.Target, wi watch.Interface, opts Options, fn func(watch.Event) error) error {
	last := opts.ResourceVersion
	for {
		var ev watch.Event
		var open bool
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, open = <-wi.ResultChan():
		}
		switch {
		case !open && ctx.Err() != nil:
			return ctx.Err()
		case !open:
			return fmt.Errorf("watching %s: etcd ended the watch after resourceVersion %s", t.Path, last)
		case ev.Type == watch.Error:
			return watchError(t, opts.ResourceVersion, last, ev.Object)
		case ev.Type == watch.Bookmark:
			continue
		case ev.Object == nil:
			// A deletion comes with the object as it was; etcd sends
			// none when it no longer has the previous value.
			err := fmt.Errorf("watching %s after resourceVersion %s: a %s event came without its object", t.Path, last, ev.Type)
			if opts.OnError == nil {
				return err
			}
			opts.OnError(err)
			continue
		}
		if err := fn(ev); err != nil {
			return err
		}
		if rv := resourceVersionOf(ev.Object); rv != "" {
			last = rv
		}
	}
}

// watchError turns the error event that ends a watch into an error: a
// compacted start is a TooOldError, anything else (a value that cannot be
// decoded or decrypted, a lost etcd leader) says where the watch stopped.
func watchError(t handle.Target, start, last string, obj runtime.Object) error {
	err := apierrors.FromObject(obj)
	if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		return &TooOldError{Path: t.Path, ResourceVersion: start, Err: err}
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		err = fmt.Errorf("unexpected error event %T", obj)
	}
	return fmt.Errorf("watching %s after resourceVersion %s: %w", t.Path, last, err)
}

func resourceVersionOf(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetResourceVersion()
}

// Revision is the current revision of the etcd that holds the target: a
// watch from it reports the changes made from now on. It is read with a
// count-only range request, which writes nothing.
func Revision(ctx context.Context, t handle.Target) (string, error) {
	c, err := t.Client(ctx)
	if err != nil {
		return "", err
	}
	rev, err := etcdview.Revision(ctx, c)
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(rev, 10), nil
}
