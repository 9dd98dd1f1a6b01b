package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/stores"
)

// watchFlags are get's flags for following changes, as kubectl get has
// them, and --resource-version to start in the past.
type watchFlags struct {
	Watch             bool
	WatchOnly         bool
	OutputWatchEvents bool
	ResourceVersion   string
}

func addWatchFlags(fs *pflag.FlagSet, f *watchFlags) {
	fs.BoolVarP(&f.Watch, "watch", "w", false, "After listing or getting the objects, watch for changes (until Ctrl-C)")
	fs.BoolVar(&f.WatchOnly, "watch-only", false, "Watch for changes without listing or getting first")
	fs.BoolVar(&f.OutputWatchEvents, "output-watch-events", false, "Print watch events (ADDED, MODIFIED, DELETED) with --watch or --watch-only; objects listed first are ADDED events")
	fs.StringVar(&f.ResourceVersion, "resource-version", "", "With --watch-only, print the changes made after this resourceVersion (an etcd revision) rather than from now")
}

func (f watchFlags) watching() bool { return f.Watch || f.WatchOnly }

// check refuses what kubectl refuses, and a --resource-version that is no
// revision or would not fit the list --watch prints first.
func (f watchFlags) check() error {
	switch {
	case f.OutputWatchEvents && !f.watching():
		return errors.New("`--output-watch-events` needs `--watch` or `--watch-only`")
	case f.ResourceVersion == "":
		return nil
	case !f.WatchOnly:
		return errors.New("`--resource-version` needs `--watch-only`: the list `--watch` prints first is the state now, not at that version")
	}
	if _, err := strconv.ParseUint(f.ResourceVersion, 10, 64); err != nil {
		return fmt.Errorf("invalid `--resource-version` %q: want an etcd revision, e.g. 12345", f.ResourceVersion)
	}
	return nil
}

// runWatch is get --watch and --watch-only. Unless --watch-only, it prints
// the current objects, then one object or row per change until Ctrl-C, as
// kubectl get --watch does (stores.ListThenWatch).
func runWatch(ctx context.Context, t stores.Target, names []string, opts *getOptions) error {
	lw, err := watchScope(t, names, opts)
	if err != nil {
		return err
	}
	p, err := newWatcher(t, opts)
	if err != nil {
		return err
	}
	err = stores.ListThenWatch(ctx, t, lw,
		func(page stores.Page) error { return p.page(ctx, page) },
		p.out.Flush,
		func(ev watch.Event) error { return p.event(ctx, ev) })
	return watchEnded(ctx, opts, err)
}

// watchScope is what to list and watch, from get's flags: the target's
// objects that match the selectors, or the one named.
func watchScope(t stores.Target, names []string, opts *getOptions) (stores.ListThenWatchOptions, error) {
	if !slices.Contains(t.Resource.Verbs, "watch") {
		return stores.ListThenWatchOptions{}, fmt.Errorf("%s cannot be watched", t.Path)
	}
	if len(names) > 1 {
		return stores.ListThenWatchOptions{}, errors.New("`--watch` follows one object or one type at a time: name one object at most")
	}
	lw := stores.ListThenWatchOptions{
		WatchOptions: stores.WatchOptions{
			LabelSelector:   opts.LabelSelector,
			FieldSelector:   opts.FieldSelector,
			ResourceVersion: opts.ResourceVersion,
			OnError:         func(err error) { fmt.Fprintf(opts.IO.ErrOut, "error: %s\n", render.OneLine(err)) },
			OnLost: func() {
				fmt.Fprintf(opts.IO.ErrOut, "warning: lost the connection to etcd; reconnecting, the watch goes on from where it stopped\n")
			},
		},
		ChunkSize: opts.ChunkSize,
		Revision:  opts.Revision,
		WatchOnly: opts.WatchOnly,
	}
	if opts.WatchOnly && opts.Revision > 0 {
		// The changes after the revision, as with --resource-version.
		lw.ResourceVersion = strconv.FormatInt(opts.Revision, 10)
	}
	if len(names) == 1 {
		lw.Name = names[0]
	}
	return lw, nil
}

// watchEnded words how a watch ended. Ctrl-C is the usual end: its cause
// makes Run exit 130.
func watchEnded(ctx context.Context, opts *getOptions, err error) error {
	var tooOld *stores.TooOldError
	switch {
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case errors.As(err, &tooOld) && opts.ResourceVersion != "":
		return fmt.Errorf("%w; watch from a later `--resource-version`, or without one to start from now", err)
	case errors.As(err, &tooOld):
		return fmt.Errorf("%w; run the command again to list and watch from now", err)
	}
	return err
}

// watcher prints a watch's list and events through one printer, so that a
// table's header is printed once and yaml documents are separated.
type watcher struct {
	t    stores.Target
	opts *getOptions
	out  *render.WatchPrinter
}

// newWatcher prints with kubectl get's output options, warning of those a
// watch ignores as kubectl does.
func newWatcher(t stores.Target, opts *getOptions) (*watcher, error) {
	kind := schema.GroupKind{Group: t.Resource.Group, Kind: t.Resource.Kind}
	out, err := opts.Print.NewWatchPrinter(opts.IO.Out, opts.Output, kind, opts.OutputWatchEvents, opts.AllNamespaces && t.Resource.Namespaced)
	if err != nil {
		return nil, err
	}
	if warning := out.Warning(); warning != "" {
		fmt.Fprintln(opts.IO.ErrOut, warning)
	}
	return &watcher{t: t, opts: opts, out: out}, nil
}

// page prints a page of the list as ADDED objects.
func (p *watcher) page(ctx context.Context, page stores.Page) error {
	if p.opts.tabular() {
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
		if err := p.out.Object(string(watch.Added), p.opts.trim(obj)); err != nil {
			return err
		}
	}
	return nil
}

// event prints one change as it comes.
func (p *watcher) event(ctx context.Context, ev watch.Event) error {
	if p.opts.tabular() {
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
	if err := p.out.Object(string(ev.Type), p.opts.trim(obj)); err != nil {
		return err
	}
	return p.out.Flush()
}
