// Package get is regctl get: it reads objects through the stores of the
// storage map (one by name, lists page by page, at an etcd revision, or
// followed with a watch) and prints them as kubectl get prints the
// apiserver's responses. It takes targets already resolved and links
// nothing of the map's assembly.
package get

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/stores"
	"github.com/regctl/regctl/internal/target"
)

// Options are what get reads of its targets and how it prints them.
type Options struct {
	// Out gets the objects; ErrOut what could not be read, and warnings.
	Out, ErrOut io.Writer
	// Output is -o as Print read it (GetPrintFlags.Format); Print holds
	// kubectl's other output flags.
	Output render.Format
	Print  *render.GetPrintFlags
	// Args are the command's arguments as given, for messages.
	Args []string
	// AllNamespaces prints a NAMESPACE column for namespaced types.
	AllNamespaces bool
	// LabelSelector and FieldSelector are kubectl's -l and --field-selector.
	LabelSelector, FieldSelector string
	// ChunkSize is objects per page; 0 reads a list at once.
	ChunkSize int64
	// Revision reads etcd as it was at this revision; 0 is now.
	Revision int64
	// IgnoreNotFound passes over named objects that do not exist, and
	// says nothing when a list finds none.
	IgnoreNotFound bool
	// ShowManagedFields keeps metadata.managedFields in yaml and json.
	ShowManagedFields bool

	// Watch and WatchOnly follow changes as kubectl get does, after
	// printing the objects or not; OutputWatchEvents prints each as an
	// event. ResourceVersion starts a --watch-only after that revision.
	Watch, WatchOnly, OutputWatchEvents bool
	ResourceVersion                     string
}

// ErrReported ends a get that printed what it could read and reported on
// ErrOut, one by one, what it could not: there is nothing more to say, but
// the command failed.
var ErrReported = errors.New("get failed, as reported")

// Validate checks the options that need no etcd: what kubectl refuses of
// its watch flags, and a --resource-version that is no revision or would
// not fit the list --watch prints first. snapshot names the etcd snapshot
// read, if any, where nothing changes.
func (o *Options) Validate(snapshot string) error {
	if err := stores.CheckChunkSize(o.ChunkSize); err != nil {
		return err
	}
	switch {
	case o.watching() && snapshot != "":
		return fmt.Errorf("%s is an etcd snapshot, where nothing changes: get without `-w`", snapshot)
	case o.ResourceVersion != "" && o.Revision != 0:
		return errors.New("`--resource-version` and `--revision` both say where a watch starts: give one")
	case o.OutputWatchEvents && !o.watching():
		return errors.New("`--output-watch-events` needs `--watch` or `--watch-only`")
	case o.ResourceVersion == "":
		return nil
	case !o.WatchOnly:
		return errors.New("`--resource-version` needs `--watch-only`: the list `--watch` prints first is the state now, not at that version")
	}
	if _, err := strconv.ParseUint(o.ResourceVersion, 10, 64); err != nil {
		return fmt.Errorf("invalid `--resource-version` %q: want an etcd revision, e.g. 12345", o.ResourceVersion)
	}
	return nil
}

func (o *Options) watching() bool { return o.Watch || o.WatchOnly }

func (o *Options) tabular() bool { return o.Output == render.Table || o.Output == render.Wide }

// Run reads and prints the objects of named: the names given, else every
// object of each type; with a watch, one type and then its changes.
func Run(ctx context.Context, named []target.Named, o Options) error {
	targets := make([]handle.Target, len(named))
	for i, t := range named {
		targets[i] = t.Target
	}
	if err := stores.CheckRevisions(ctx, targets, o.Revision); err != nil {
		return err
	}
	switch {
	case o.watching() && len(targets) > 1:
		return fmt.Errorf("`--watch` follows one type at a time, not %s", strings.Join(o.Args, " "))
	case o.watching():
		return watchTarget(ctx, targets[0], named[0].Names, &o)
	case len(named[0].Names) > 0:
		return getNamed(ctx, named, &o)
	}
	for _, t := range targets {
		if !slices.Contains(t.Resource.Verbs, "list") {
			return fmt.Errorf("%s cannot be listed: name an object", t.Path)
		}
	}
	// What a page of the list prints is written when the page is done:
	// kubectl's printers write a line at a time, and under the table writer
	// a cell at a time, each a system call on an unbuffered stdout.
	out := bufio.NewWriterSize(o.Out, 64<<10)
	o.Out = out
	if o.tabular() {
		return cmp.Or(listTables(ctx, targets, &o, out), out.Flush())
	}
	return cmp.Or(listObjects(ctx, targets, &o, out), out.Flush())
}

// getNamed reads each named object of each type; missing ones are reported
// and the others still printed, as kubectl does. Nothing is printed before
// every name has been read, so a read cut short prints nothing at all.
func getNamed(ctx context.Context, targets []target.Named, o *Options) error {
	var tables []*render.ObjectTable
	var objs []runtime.Object
	failed, total := 0, 0
	for _, t := range targets {
		table := o.newTable(t.Target, false)
		tables = append(tables, table)
		for _, name := range t.Names {
			total++
			obj, err := o.readNamed(ctx, t.Target, name, table)
			switch {
			case err != nil && ctx.Err() != nil:
				return err
			case err != nil && o.IgnoreNotFound && apierrors.IsNotFound(err):
			case err != nil:
				failed++
				fmt.Fprintf(o.ErrOut, "error: %s\n", render.OneLine(err))
			case obj != nil:
				objs = append(objs, obj)
			}
		}
	}
	if err := printNamed(tables, objs, total == 1, o); err != nil {
		return err
	}
	if failed > 0 {
		return ErrReported
	}
	return nil
}

// readNamed reads one object: into table for a table, since the store's
// table printer takes the object as the store holds it; otherwise it
// returns it in the served version, for yaml, json and names.
func (o *Options) readNamed(ctx context.Context, t handle.Target, name string, table *render.ObjectTable) (runtime.Object, error) {
	obj, err := o.getInternal(ctx, t, name)
	if err != nil {
		return nil, err
	}
	if o.tabular() {
		tb, err := stores.Table(ctx, t, obj)
		if err == nil {
			table.Append(tb)
		}
		return nil, err
	}
	ext, err := stores.ToExternal(t, obj)
	if err != nil {
		return nil, fmt.Errorf("reading %s %q: %w", t.Path, name, err)
	}
	return o.trim(ext), nil
}

// getInternal reads one object now, or at Revision.
func (o *Options) getInternal(ctx context.Context, t handle.Target, name string) (runtime.Object, error) {
	if o.Revision > 0 {
		return stores.GetInternalAt(ctx, t, name, o.Revision)
	}
	return stores.GetInternal(ctx, t, name)
}

// printNamed prints the objects found: one name as the object itself,
// several as a List of those found; none found prints nothing.
func printNamed(tables []*render.ObjectTable, objs []runtime.Object, single bool, o *Options) error {
	switch {
	case o.tabular():
		withKinds(tables)
		_, err := render.PrintTables(o.Out, o.Output, tables)
		return err
	case len(objs) == 0:
		return nil
	case single && o.Output != render.Name:
		return o.Print.PrintObject(o.Out, o.Output, objs[0])
	}
	lw := o.Print.NewListWriter(o.Out, o.Output)
	for _, obj := range objs {
		if err := lw.Add(obj); err != nil {
			return err
		}
	}
	return lw.Close()
}

// withKinds names each object of the tables of named objects with its kind
// when more than one table has rows, as kubectl does: a type asked for but
// not found does not count.
func withKinds(tables []*render.ObjectTable) {
	withRows := 0
	for _, t := range tables {
		if t.Len() > 0 {
			withRows++
		}
	}
	for _, t := range tables {
		t.WithKind = withRows > 1
	}
}
