package listwatch

import (
	"context"
	"errors"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/stores"
)

// ListThenWatchOptions select what ListThenWatch lists and follows.
type ListThenWatchOptions struct {
	Options
	// Name, when set, is the one object followed, as kubectl watches one
	// object (a metadata.name field selector); it must exist.
	Name string
	// ChunkSize pages the list; Revision lists the objects as they were at
	// that etcd revision (0: now).
	ChunkSize int64
	Revision  int64
	// WatchOnly reads no list to hand on: the watch starts now, or, for a
	// named object, once the list has said that it exists.
	WatchOnly bool
}

// ListThenWatch is get --watch as kubectl does it: the objects listed
// (each page handed to onPage, then onListed once the list is whole),
// then every change from the revision the list was read at, handed to
// onEvent, so that no change is missed or shown twice. With
// opts.ResourceVersion set nothing is listed and the changes after it
// are followed. It returns when ctx ends, a callback fails, or the watch
// ends with an error, as Watch does.
func ListThenWatch(ctx context.Context, t handle.Target, opts ListThenWatchOptions, onPage func(stores.Page) error, onListed func() error, onEvent func(watch.Event) error) error {
	wo := opts.Options
	if opts.Name != "" {
		byName := fields.OneTermEqualSelector("metadata.name", opts.Name).String()
		if wo.FieldSelector == "" {
			wo.FieldSelector = byName
		} else {
			wo.FieldSelector = byName + "," + wo.FieldSelector
		}
	}
	if wo.ResourceVersion == "" {
		rev, err := startRevision(ctx, t, opts, wo, onPage, onListed)
		if err != nil {
			return err
		}
		wo.ResourceVersion = rev
	}
	return Watch(ctx, t, wo, onEvent)
}

// startRevision is where the watch starts: the revision the list was read
// at. A named object must exist, as kubectl wants. etcd's revision from
// before the list stands in when the list does not say (it was read key by
// key around an unreadable value): a change made meanwhile may then show
// twice, but none is missed.
func startRevision(ctx context.Context, t handle.Target, opts ListThenWatchOptions, wo Options, onPage func(stores.Page) error, onListed func() error) (string, error) {
	rev := strconv.FormatInt(opts.Revision, 10)
	if opts.Revision == 0 {
		var err error
		if rev, err = Revision(ctx, t); err != nil {
			return "", err
		}
	}
	if opts.WatchOnly && opts.Name == "" {
		return rev, nil
	}
	var listed string
	found := 0
	lo := stores.ListOptions{LabelSelector: wo.LabelSelector, FieldSelector: wo.FieldSelector, ChunkSize: opts.ChunkSize, Revision: opts.Revision}
	if wo.OnError != nil {
		lo.OnError = func(key string, err error) { wo.OnError(err) }
	}
	err := stores.List(ctx, t, lo, func(page stores.Page) error {
		if listed == "" {
			listed = page.ResourceVersion()
		}
		found += len(page.Items)
		if opts.WatchOnly {
			return nil
		}
		return onPage(page)
	})
	if !stores.WalkedToEnd(err) {
		return "", err
	}
	if ferr := onListed(); ferr != nil {
		return "", ferr
	}
	var unreadable *stores.UnreadableError
	switch {
	case opts.Name != "" && found == 0 && errors.As(err, &unreadable):
		// The object is there but cannot be read, as reported.
		return "", err
	case opts.Name != "" && found == 0:
		return "", apierrors.NewNotFound(schema.GroupResource{Group: t.Resource.Group, Resource: t.Resource.Name}, opts.Name)
	}
	if listed != "" {
		rev = listed
	}
	return rev, nil
}
