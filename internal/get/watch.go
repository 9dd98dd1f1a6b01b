package get

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/stores"
	"github.com/regctl/regctl/internal/stores/listwatch"
)

// watchTarget is get --watch and --watch-only. Unless --watch-only, it
// prints the current objects, then one object or row per change until
// Ctrl-C, as kubectl get --watch does (stores.ListThenWatch).
func watchTarget(ctx context.Context, t handle.Target, names []string, o *Options) error {
	lw, err := watchScope(t, names, o)
	if err != nil {
		return err
	}
	p, err := newWatcher(t, o)
	if err != nil {
		return err
	}
	err = listwatch.ListThenWatch(ctx, t, lw,
		func(page stores.Page) error { return p.page(ctx, page) },
		p.out.Flush,
		func(ev watch.Event) error { return p.event(ctx, ev) })
	return watchEnded(ctx, o, err)
}

// watchScope is what to list and watch, from get's options: the target's
// objects that match the selectors, or the one named.
func watchScope(t handle.Target, names []string, o *Options) (listwatch.ListThenWatchOptions, error) {
	if !slices.Contains(t.Resource.Verbs, "watch") {
		return listwatch.ListThenWatchOptions{}, fmt.Errorf("%s cannot be watched", t.Path)
	}
	if len(names) > 1 {
		return listwatch.ListThenWatchOptions{}, errors.New("`--watch` follows one object or one type at a time: name one object at most")
	}
	lw := listwatch.ListThenWatchOptions{
		Options: listwatch.Options{
			LabelSelector:   o.LabelSelector,
			FieldSelector:   o.FieldSelector,
			ResourceVersion: o.ResourceVersion,
			OnError:         func(err error) { fmt.Fprintf(o.ErrOut, "error: %s\n", render.OneLine(err)) },
			OnLost: func() {
				fmt.Fprintf(o.ErrOut, "warning: lost the connection to etcd; reconnecting, the watch goes on from where it stopped\n")
			},
		},
		ChunkSize: o.ChunkSize,
		Revision:  o.Revision,
		WatchOnly: o.WatchOnly,
	}
	if o.WatchOnly && o.Revision > 0 {
		// The changes after the revision, as with --resource-version.
		lw.ResourceVersion = strconv.FormatInt(o.Revision, 10)
	}
	if len(names) == 1 {
		lw.Name = names[0]
	}
	return lw, nil
}

// watchEnded words how a watch ended. Ctrl-C is the usual end: its cause
// is returned as it is, for the command to exit as interrupted.
func watchEnded(ctx context.Context, o *Options, err error) error {
	var tooOld *listwatch.TooOldError
	switch {
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case errors.As(err, &tooOld) && o.ResourceVersion != "":
		return fmt.Errorf("%w; watch from a later `--resource-version`, or without one to start from now", err)
	case errors.As(err, &tooOld):
		return fmt.Errorf("%w; run the command again to list and watch from now", err)
	}
	return err
}

// watcher prints a watch's list and events through one printer, so that a
// table's header is printed once and yaml documents are separated.
type watcher struct {
	t   handle.Target
	o   *Options
	out *render.WatchPrinter
}

// newWatcher prints with kubectl get's output options, warning of those a
// watch ignores as kubectl does.
func newWatcher(t handle.Target, o *Options) (*watcher, error) {
	kind := schema.GroupKind{Group: t.Resource.Group, Kind: t.Resource.Kind}
	out, err := o.Print.NewWatchPrinter(o.Out, o.Output, kind, o.OutputWatchEvents, o.AllNamespaces && t.Resource.Namespaced)
	if err != nil {
		return nil, err
	}
	if warning := out.Warning(); warning != "" {
		fmt.Fprintln(o.ErrOut, warning)
	}
	return &watcher{t: t, o: o, out: out}, nil
}

// page prints a page of the list as ADDED objects.
func (p *watcher) page(ctx context.Context, page stores.Page) error {
	if p.o.tabular() {
		if len(page.Items) == 0 {
			return nil
		}
		table, err := stores.Table(ctx, p.t, page.List)
		if err != nil {
			return err
		}
		return p.out.Table(string(watch.Added), table)
	}
	for _, item := range page.Items {
		obj, err := stores.ListItemToExternal(p.t, item)
		if err != nil {
			return err
		}
		if err := p.out.Object(string(watch.Added), p.o.trim(obj)); err != nil {
			return err
		}
	}
	return nil
}

// event prints one change as it comes.
func (p *watcher) event(ctx context.Context, ev watch.Event) error {
	if p.o.tabular() {
		table, err := stores.Table(ctx, p.t, ev.Object)
		if err != nil {
			return err
		}
		if err := p.out.Table(string(ev.Type), table); err != nil {
			return err
		}
		return p.out.Flush()
	}
	obj, err := stores.ToExternal(p.t, ev.Object)
	if err != nil {
		return fmt.Errorf("watching %s: %w", p.t.Path, err)
	}
	if err := p.out.Object(string(ev.Type), p.o.trim(obj)); err != nil {
		return err
	}
	return p.out.Flush()
}
