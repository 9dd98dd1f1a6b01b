package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/regctl/regctl/internal/gctune"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/stores"
	"github.com/regctl/regctl/internal/target"
)

type getOptions struct {
	*globalOptions
	target.Scope
	Args              []string
	Output            render.Format
	Print             *render.GetPrintFlags
	Subresource       string
	LabelSelector     string
	FieldSelector     string
	ChunkSize         int64
	ShowManagedFields bool
	// IgnoreNotFound passes over named objects that do not exist.
	IgnoreNotFound bool
	watchFlags
}

var getFormats = []render.Format{render.Table, render.Wide, render.YAML, render.JSON, render.Name}

func newGetCmd(g *globalOptions, runF func(context.Context, *getOptions) error) *cobra.Command {
	opts := &getOptions{globalOptions: g, Print: render.NewGetPrintFlags()}
	var output string
	cmd := &cobra.Command{
		Use:   "get TYPE[,TYPE...] [NAME...] | TYPE/NAME... [-n NAMESPACE | -A] [-o table|wide|yaml|json|name|jsonpath=...|custom-columns=...|go-template=...]",
		Short: "Read objects from etcd through kube-apiserver's own stores",
		Long: `Read objects from etcd through the store of their path: the server's Get and List,
codecs, key functions, selectors (predicates) and table printers. Nothing is written.

Names are resolved as kubectl resolves them, with kubectl's RESTMapper on the server's
discovery: plural, singular, kind or short name (po, svc, cm, ...), resource.version.group
(pods.v1.). Several types are read at once as kubectl reads them: pods,services, the
category all, or objects named TYPE/NAME (pods/web services/web); tables print one per type,
names prefixed with their kind. With
--ignore-not-found, named objects that do not exist are passed over.
Objects print as the apiserver serves them (external version, apiVersion and kind set);
managedFields are hidden unless --show-managed-fields. Objects whose stored value cannot be
read are reported on stderr with their etcd key and the reason, the rest are printed, and
the exit code is 1.

Tables are the store's table printer's, printed by kubectl's own table printer as kubectl
get prints the apiserver's, with kubectl's --no-headers, --show-labels, -L/--label-columns,
--show-kind and --sort-by. -o jsonpath=, custom-columns=, go-template= (their -file forms,
and --template) are printed by kubectl's printers too. With --sort-by or a template, a list
is printed once all of it has been read; otherwise yaml, json and names stream page by page.

With -w (--watch), the objects are printed and then every change to them, until Ctrl-C,
as kubectl get -w prints them: a table's header once, then a row per change; yaml
documents separated by ---; json objects one after another. Changes come from the
store's own Watch on etcd (no watch cache, so no apiserver is needed), from the revision
the list was read at: none is missed or shown twice. One object is watched by name
(metadata.name), and must exist. --watch-only prints the changes alone.
--output-watch-events shows each as an event: an EVENT column (ADDED, MODIFIED,
DELETED), or one {"type":...,"object":...} line per event in json. With --watch-only,
--resource-version RV starts after etcd revision RV, as long as etcd has not compacted
the changes since. A watch writes nothing to etcd.

  regctl get pods -n shop -w
  regctl get pods/web -n shop --watch-only --output-watch-events -o json

With --revision N, objects are read as they were at etcd revision N, with the store's List
at exactly that resourceVersion (the apiserver's resourceVersionMatch=Exact; one object is a
list of its name), as long as etcd has not compacted it. With -w, the objects at N are
printed, then every change after N, as a kubectl watch from resourceVersion N replays
them; with --watch-only, the changes after N alone. ` + "`regctl inspect TYPE/NAME --history`" + `
lists the revisions of an object.`,
		Example: `  # One pod, as the apiserver's GET returns it
  regctl get pods/web -n shop -o yaml

  # Every pod on one node, across namespaces
  regctl get pods -A --field-selector spec.nodeName=node-1

  # Pods and services of a namespace, a table for each
  regctl get pods,services -n shop

  # The status subresource of a pod
  regctl get pods/status web -n shop -o json

  # Names of the pods on one node, with kubectl's JSONPath
  regctl get pods -A --field-selector spec.nodeName=node-1 -o jsonpath='{.items[*].metadata.name}'

  # A config map as it was at etcd revision 12
  regctl get configmaps/app-config -n shop --revision 12 -o yaml

  # Every pod and its node, oldest first
  regctl get pods -A -o custom-columns=NAME:.metadata.name,NODE:.spec.nodeName --sort-by=.metadata.creationTimestamp`,
		ValidArgsFunction: completeResourceObjects(g),
		Args:              cobra.MinimumNArgs(1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			f, err := opts.Print.Format(output, cmd.Flags().Changed("output"), getFormats...)
			opts.Output = f
			opts.NamespaceSet = cmd.Flags().Changed("namespace")
			if err != nil {
				return err
			}
			if err := checkChunkSize(opts.ChunkSize); err != nil {
				return err
			}
			if opts.watching() && g.Snapshot != "" {
				return fmt.Errorf("%s is an etcd snapshot, where nothing changes: get without `-w`", g.Snapshot)
			}
			if opts.ResourceVersion != "" && opts.Revision != 0 {
				return errors.New("`--resource-version` and `--revision` both say where a watch starts: give one")
			}
			return opts.watchFlags.check()
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runGet(cmd.Context(), opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&output, "output", "o", string(render.Table),
		"Output format: table|wide|yaml|json|name, or kubectl's jsonpath=, jsonpath-file=, custom-columns=, custom-columns-file=, go-template=, go-template-file=")
	opts.Print.AddFlags(cmd)
	addScopeFlags(fs, &opts.Scope)
	fs.StringVar(&opts.Subresource, "subresource", "", "Read this subresource of the object (e.g. status)")
	fs.StringVarP(&opts.LabelSelector, "selector", "l", "", "Label selector, e.g. app=web,tier!=db")
	fs.StringVar(&opts.FieldSelector, "field-selector", "", "Field selector, e.g. spec.nodeName=node-1,status.phase=Running")
	fs.Int64Var(&opts.ChunkSize, "chunk-size", 500, "Objects per page; 0 reads all at once. A page is one etcd range request, or, without selectors, one per core, read side by side")
	fs.BoolVar(&opts.IgnoreNotFound, "ignore-not-found", false, "Pass over named objects that do not exist, and say nothing when a list finds none")
	fs.BoolVar(&opts.ShowManagedFields, "show-managed-fields", false, "Keep metadata.managedFields in yaml and json output")
	addWatchFlags(fs, &opts.watchFlags)
	_ = cmd.RegisterFlagCompletionFunc("namespace", completeNamespaces(g))
	_ = cmd.RegisterFlagCompletionFunc("output", completeFormats(append(getFormats, opts.Print.KubectlFormats()...)...))
	return cmd
}

func runGet(ctx context.Context, opts *getOptions) error {
	ctx = render.WithWarnings(ctx, opts.IO.ErrOut)
	refs, err := target.ParseRefs(opts.Args, opts.Subresource, true)
	if err != nil {
		return err
	}
	w, named, err := opts.openLiveTypes(ctx, refs, opts.Scope, "get", target.Types)
	if err != nil {
		return err
	}
	defer w.Close()
	targets := make([]stores.Target, len(named))
	for i, t := range named {
		targets[i] = t.Target
	}
	if err := stores.CheckRevisions(ctx, targets, opts.Revision); err != nil {
		return err
	}
	switch {
	case opts.watching() && len(targets) > 1:
		return fmt.Errorf("`--watch` follows one type at a time, not %s", strings.Join(opts.Args, " "))
	case opts.watching():
		return runWatch(ctx, targets[0], named[0].Names, opts)
	case len(named[0].Names) > 0:
		return getNamed(ctx, named, opts)
	}
	for _, t := range targets {
		if !slices.Contains(t.Resource.Verbs, "list") {
			return fmt.Errorf("%s cannot be listed: name an object", t.Path)
		}
	}
	if opts.tabular() {
		return listTables(ctx, targets, opts)
	}
	return listObjects(ctx, targets, opts)
}

func (o *getOptions) tabular() bool { return o.Output == render.Table || o.Output == render.Wide }

// getNamed reads each named object of each type; missing ones are reported
// and the others still printed, as kubectl does. Nothing is printed before
// every name has been read, so a read cut short prints nothing at all.
func getNamed(ctx context.Context, targets []target.Named, opts *getOptions) error {
	var tables []*render.ObjectTable
	var objs []runtime.Object
	failed, total := 0, 0
	for _, t := range targets {
		table := opts.newTable(t.Target, false)
		tables = append(tables, table)
		for _, name := range t.Names {
			total++
			obj, err := opts.readNamed(ctx, t.Target, name, table)
			switch {
			case err != nil && ctx.Err() != nil:
				return err
			case err != nil && opts.IgnoreNotFound && apierrors.IsNotFound(err):
			case err != nil:
				failed++
				fmt.Fprintf(opts.IO.ErrOut, "error: %s\n", render.OneLine(err))
			case obj != nil:
				objs = append(objs, obj)
			}
		}
	}
	if err := printNamed(tables, objs, total == 1, opts); err != nil {
		return err
	}
	if failed > 0 {
		return &exitError{code: 1}
	}
	return nil
}

// readNamed reads one object: into table for a table, since the store's
// table printer takes the object as the store holds it; otherwise it
// returns it in the served version, for yaml, json and names.
func (o *getOptions) readNamed(ctx context.Context, t stores.Target, name string, table *render.ObjectTable) (runtime.Object, error) {
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

// getInternal reads one object now, or at `--revision`.
func (o *getOptions) getInternal(ctx context.Context, t stores.Target, name string) (runtime.Object, error) {
	if o.Revision > 0 {
		return stores.GetInternalAt(ctx, t, name, o.Revision)
	}
	return stores.GetInternal(ctx, t, name)
}

// printNamed prints the objects found: one name as the object itself,
// several as a List of those found; none found prints nothing. Tables of
// several types name each object with its kind when more than one type has
// some, as kubectl does.
func printNamed(tables []*render.ObjectTable, objs []runtime.Object, single bool, opts *getOptions) error {
	switch {
	case opts.tabular():
		withRows := 0
		for _, t := range tables {
			if t.Len() > 0 {
				withRows++
			}
		}
		for _, t := range tables {
			t.WithKind = withRows > 1
		}
		_, err := render.PrintTables(opts.IO.Out, opts.Output, tables)
		return err
	case len(objs) == 0:
		return nil
	case single && opts.Output != render.Name:
		return opts.Print.PrintObject(opts.IO.Out, opts.Output, objs[0])
	}
	lw := opts.Print.NewListWriter(opts.IO.Out, opts.Output)
	for _, obj := range objs {
		if err := lw.Add(obj); err != nil {
			return err
		}
	}
	return lw.Close()
}

// listOptions are the store list options of get's flags; unreadable values
// are reported as they are met.
func (o *getOptions) listOptions() stores.ListOptions {
	return stores.ListOptions{
		LabelSelector: o.LabelSelector,
		FieldSelector: o.FieldSelector,
		ChunkSize:     o.ChunkSize,
		Revision:      o.Revision,
		OnError: func(key string, err error) {
			fmt.Fprintf(o.IO.ErrOut, "error: %s\n", render.OneLine(err))
		},
	}
}

// listTables pages through each type's store, keeping a table's cells (and
// row metadata), and prints the tables once every list has been read to
// its end: a list that stops early prints no table at all.
func listTables(ctx context.Context, targets []stores.Target, opts *getOptions) error {
	opts.boundHeap()
	var tables []*render.ObjectTable
	var unreadable error
	for _, t := range targets {
		table := opts.newTable(t, opts.AllNamespaces && t.Resource.Namespaced)
		table.WithKind = len(targets) > 1
		err := stores.List(ctx, t, opts.listOptions(), func(p stores.Page) error {
			if len(p.Items) == 0 {
				return nil
			}
			tb, err := stores.Table(ctx, t, p.List)
			if err == nil {
				table.Append(tb)
			}
			return err
		})
		if !stores.WalkedToEnd(err) {
			return listCut(ctx, t, err)
		}
		unreadable = cmp.Or(unreadable, err)
		tables = append(tables, table)
	}
	printed, err := render.PrintTables(opts.IO.Out, opts.Output, tables)
	if err == nil && !printed && unreadable == nil && !opts.IgnoreNotFound {
		fmt.Fprintln(opts.IO.ErrOut, noResources(targets))
	}
	return cmp.Or(unreadable, err)
}

// listObjects streams each type's objects, page by page, into one yaml or
// json List (or names). A list that stops before its end leaves the
// document open, so it never passes for the whole.
func listObjects(ctx context.Context, targets []stores.Target, opts *getOptions) error {
	opts.boundHeap()
	lw := opts.Print.NewListWriter(opts.IO.Out, opts.Output)
	var unreadable error
	for _, t := range targets {
		err := stores.List(ctx, t, opts.listOptions(), func(p stores.Page) error {
			for _, item := range p.Items {
				obj, err := stores.ListItemToExternal(t, item)
				if err != nil {
					return err
				}
				if err := lw.Add(opts.trim(obj)); err != nil {
					return err
				}
			}
			return nil
		})
		if !stores.WalkedToEnd(err) {
			lw.Cut()
			return listCut(ctx, t, err)
		}
		unreadable = cmp.Or(unreadable, err)
	}
	// Values that could not be read were reported one by one; the rest is
	// the whole list, printed in full, and the error still makes the exit
	// code 1.
	return cmp.Or(unreadable, lw.Close())
}

// listCut is the error of a list that stopped before its end.
func listCut(ctx context.Context, t stores.Target, err error) error {
	if err == ctx.Err() {
		return fmt.Errorf("listing %s: %w", t.Path, err)
	}
	return err
}

// checkChunkSize refuses a negative page size, which has no meaning; 0
// turns paging off.
func checkChunkSize(n int64) error {
	if n < 0 {
		return fmt.Errorf("`--chunk-size` must be 0 (no paging) or more, not %d", n)
	}
	return nil
}

// noResources is what kubectl says when a list finds nothing: the
// namespace, when every type was listed in one.
func noResources(targets []stores.Target) string {
	for _, t := range targets {
		if t.Namespace == "" {
			return "No resources found"
		}
	}
	return fmt.Sprintf("No resources found in %s namespace.", targets[0].Namespace)
}

// boundHeap bounds the heap while a list is read, unless the output holds
// every object (--sort-by, templates): a bound meant for two pages would
// then keep the collector running.
func (o *getOptions) boundHeap() {
	if !o.Print.HoldsObjects() {
		gctune.BoundHeap()
	}
}

// newTable starts a table of t's objects for kubectl's table printer, which
// reads, for --sort-by, each row's object in the served version.
func (o *getOptions) newTable(t stores.Target, withNamespace bool) *render.ObjectTable {
	kind := schema.GroupKind{Group: t.Resource.Group, Kind: t.Resource.Kind}
	return o.Print.NewTable(kind, withNamespace, func(obj runtime.Object) (runtime.Object, error) {
		return stores.ListItemToExternal(t, obj)
	})
}

// trim hides managedFields unless asked, as kubectl does.
func (o *getOptions) trim(obj runtime.Object) runtime.Object {
	if o.ShowManagedFields {
		return obj
	}
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj
}
