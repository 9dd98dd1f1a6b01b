package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/regctl/regctl/internal/gctune"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/stores"
	"github.com/regctl/regctl/internal/wiring"
)

type getOptions struct {
	*globalOptions
	scopeOptions
	Args              []string
	Output            render.Format
	Subresource       string
	LabelSelector     string
	FieldSelector     string
	ChunkSize         int64
	ShowManagedFields bool
}

var getFormats = []render.Format{render.Table, render.Wide, render.YAML, render.JSON, render.Name}

func newGetCmd(g *globalOptions, runF func(context.Context, *getOptions) error) *cobra.Command {
	opts := &getOptions{globalOptions: g}
	var output string
	cmd := &cobra.Command{
		Use:   "get TYPE[/NAME] [NAME...] [-n NAMESPACE | -A] [-o table|wide|yaml|json|name]",
		Short: "Read objects from etcd through kube-apiserver's own stores",
		Long: `Read objects from etcd through the store of their path: the server's Get and List,
codecs, key functions, selectors (predicates) and table printers. Nothing is written.

Names are resolved from the map: plural, singular, kind or short name (po, svc, cm, ...).
Objects print as the apiserver serves them (external version, apiVersion and kind set);
managedFields are hidden unless --show-managed-fields. Objects whose stored value cannot be
read are reported on stderr with their etcd key and the reason, the rest are printed, and
the exit code is 1.`,
		Example: `  # One pod, as the apiserver's GET returns it
  regctl get pods/web -n shop -o yaml

  # Every pod on one node, across namespaces
  regctl get pods -A --field-selector spec.nodeName=node-1

  # The status subresource of a pod
  regctl get pods/status web -n shop -o json`,
		ValidArgsFunction: completeResourceObjects(g),
		Args:              cobra.MinimumNArgs(1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			f, err := render.ParseFormat(output, getFormats...)
			opts.Output = f
			opts.namespaceSet = cmd.Flags().Changed("namespace")
			if err != nil {
				return err
			}
			return checkChunkSize(opts.ChunkSize)
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
	fs.StringVarP(&output, "output", "o", string(render.Table), "Output format: table|wide|yaml|json|name")
	addScopeFlags(fs, &opts.scopeOptions)
	fs.StringVar(&opts.Subresource, "subresource", "", "Read this subresource of the object (e.g. status)")
	fs.StringVarP(&opts.LabelSelector, "selector", "l", "", "Label selector, e.g. app=web,tier!=db")
	fs.StringVar(&opts.FieldSelector, "field-selector", "", "Field selector, e.g. spec.nodeName=node-1,status.phase=Running")
	fs.Int64Var(&opts.ChunkSize, "chunk-size", 500, "Objects per page (one etcd range request each); 0 reads all at once")
	fs.BoolVar(&opts.ShowManagedFields, "show-managed-fields", false, "Keep metadata.managedFields in yaml and json output")
	_ = cmd.RegisterFlagCompletionFunc("namespace", completeNamespaces(g))
	_ = cmd.RegisterFlagCompletionFunc("output", completeFormats(getFormats...))
	return cmd
}

func runGet(ctx context.Context, opts *getOptions) error {
	ref, err := parseObjectRef(opts.Args, opts.Subresource, true)
	if err != nil {
		return err
	}
	w, t, err := opts.openLive(ctx, ref, opts.scopeOptions, "get")
	if err != nil {
		return err
	}
	defer w.Close()
	if len(ref.Names) > 0 {
		return getNamed(ctx, w, t, ref.Names, opts)
	}
	if !slices.Contains(t.Resource.Verbs, "list") {
		return fmt.Errorf("%s cannot be listed: name an object", t.Path)
	}
	return getList(ctx, w, t, opts)
}

// getNamed reads each named object; missing ones are reported and the
// others still printed, as kubectl does. Nothing is printed before every
// name has been read, so a read cut short prints nothing at all.
func getNamed(ctx context.Context, w *wiring.Wiring, t stores.Target, names []string, opts *getOptions) error {
	tabular := opts.Output == render.Table || opts.Output == render.Wide
	table := &render.ObjectTable{}
	var objs []runtime.Object
	failed := 0
	for _, name := range names {
		obj, err := stores.GetInternal(ctx, t, name)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			failed++
			fmt.Fprintf(opts.IO.ErrOut, "error: %s\n", oneLine(err))
			continue
		}
		// The store's table printer takes the object as the store holds
		// it; yaml, json and names show the served version.
		if tabular {
			tb, err := stores.Table(ctx, t, obj)
			if err != nil {
				return err
			}
			table.Append(tb)
			continue
		}
		ext, err := stores.ToExternal(obj, t.GroupVersion())
		if err != nil {
			return fmt.Errorf("reading %s %q: %w", t.Path, name, err)
		}
		objs = append(objs, opts.trim(ext))
	}
	if err := printNamed(table, objs, len(names) == 1, opts); err != nil {
		return err
	}
	if failed > 0 {
		return &exitError{code: 1}
	}
	return nil
}

// printNamed prints the objects found: one name as the object itself,
// several as a List of those found; none found prints nothing.
func printNamed(table *render.ObjectTable, objs []runtime.Object, single bool, opts *getOptions) error {
	switch {
	case opts.Output == render.Table || opts.Output == render.Wide:
		if table.Len() == 0 {
			return nil
		}
		return render.Print(opts.IO.Out, opts.Output, table)
	case len(objs) == 0:
		return nil
	case single && opts.Output != render.Name:
		return render.Print(opts.IO.Out, opts.Output, objs[0])
	}
	lw := render.NewListWriter(opts.IO.Out, opts.Output)
	for _, obj := range objs {
		if err := lw.Add(obj); err != nil {
			return err
		}
	}
	return lw.Close()
}

// getList pages through the store: yaml, json and names stream page by
// page; a table keeps only its cells. A list that stops before its end is
// never printed as a whole one: the table is not printed, and a yaml or
// json document is left open.
func getList(ctx context.Context, w *wiring.Wiring, t stores.Target, opts *getOptions) error {
	lo := stores.ListOptions{
		LabelSelector: opts.LabelSelector,
		FieldSelector: opts.FieldSelector,
		ChunkSize:     opts.ChunkSize,
		OnError: func(key string, err error) {
			fmt.Fprintf(opts.IO.ErrOut, "error: %s\n", oneLine(err))
		},
	}
	table := &render.ObjectTable{WithNamespace: opts.AllNamespaces && t.Resource.Namespaced}
	lw := render.NewListWriter(opts.IO.Out, opts.Output)
	tabular := opts.Output == render.Table || opts.Output == render.Wide
	gctune.BoundHeap()
	err := stores.List(ctx, t, lo, func(p stores.Page) error {
		if tabular {
			if len(p.Items) == 0 {
				return nil
			}
			tb, err := stores.Table(ctx, t, p.List)
			if err != nil {
				return err
			}
			table.Append(tb)
			return nil
		}
		for _, item := range p.Items {
			obj, err := stores.ListItemToExternal(item, t.GroupVersion())
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
		if err == ctx.Err() {
			err = fmt.Errorf("listing %s: %w", t.Path, err)
		}
		if !tabular {
			lw.Cut()
		}
		return err
	}
	// Values that could not be read were reported one by one; the rest is
	// the whole list, printed in full, and err still makes the exit code 1.
	if !tabular {
		if cerr := lw.Close(); err == nil {
			err = cerr
		}
		return err
	}
	if table.Len() == 0 {
		if err == nil {
			fmt.Fprintln(opts.IO.ErrOut, noResources(t))
		}
		return err
	}
	if perr := render.Print(opts.IO.Out, opts.Output, table); err == nil {
		err = perr
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

func noResources(t stores.Target) string {
	if t.Namespace != "" {
		return fmt.Sprintf("No resources found in %s namespace.", t.Namespace)
	}
	return "No resources found"
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
