package get

import (
	"bufio"
	"cmp"
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/regctl/regctl/internal/gctune"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/stores"
)

// listOptions are the store list options of get's options; unreadable
// values are reported as they are met.
func (o *Options) listOptions() stores.ListOptions {
	return stores.ListOptions{
		LabelSelector: o.LabelSelector,
		FieldSelector: o.FieldSelector,
		ChunkSize:     o.ChunkSize,
		Revision:      o.Revision,
		OnError: func(key string, err error) {
			fmt.Fprintf(o.ErrOut, "error: %s\n", render.OneLine(err))
		},
	}
}

// listTables prints each type's table page by page as its store lists it
// (render.TableStream). With --sort-by every row is needed first: the
// tables keep their cells (and row metadata) and are printed once every
// list has been read to its end, so that a list that stops early prints
// no table at all.
func listTables(ctx context.Context, targets []handle.Target, o *Options, out *bufio.Writer) error {
	o.boundHeap()
	if o.Print.HoldsObjects() {
		return listWholeTables(ctx, targets, o)
	}
	stream := o.Print.NewTableStream(o.Out, o.Output == render.Wide)
	unreadable, err := eachTable(ctx, targets, o, func(t handle.Target) error {
		kind := schema.GroupKind{Group: t.Resource.Group, Kind: t.Resource.Kind}
		return stream.Start(kind, o.AllNamespaces && t.Resource.Namespaced, len(targets) > 1)
	}, func(tb *metav1.Table) error { return cmp.Or(stream.Append(tb), out.Flush()) })
	if err != nil {
		return err
	}
	if !stream.Printed() && unreadable == nil && !o.IgnoreNotFound {
		fmt.Fprintln(o.ErrOut, NoResources(targets))
	}
	return unreadable
}

// listWholeTables reads every type's list to its end, keeping the rows,
// then prints the tables.
func listWholeTables(ctx context.Context, targets []handle.Target, o *Options) error {
	var tables []*render.ObjectTable
	unreadable, err := eachTable(ctx, targets, o, func(t handle.Target) error {
		table := o.newTable(t, o.AllNamespaces && t.Resource.Namespaced)
		table.WithKind = len(targets) > 1
		tables = append(tables, table)
		return nil
	}, func(tb *metav1.Table) error {
		tables[len(tables)-1].Append(tb)
		return nil
	})
	if err != nil {
		return err
	}
	printed, err := render.PrintTables(o.Out, o.Output, tables)
	if err == nil && !printed && unreadable == nil && !o.IgnoreNotFound {
		fmt.Fprintln(o.ErrOut, NoResources(targets))
	}
	return cmp.Or(unreadable, err)
}

// eachTable lists each type in turn, calling start before its first page
// and add with the server-side table of each page that holds objects. It
// returns the error of values that could not be read (each reported as it
// was met), apart from err, which stopped the lists before their end.
func eachTable(ctx context.Context, targets []handle.Target, o *Options, start func(handle.Target) error, add func(*metav1.Table) error) (unreadable, err error) {
	for _, t := range targets {
		if err := start(t); err != nil {
			return nil, err
		}
		err := stores.List(ctx, t, o.listOptions(), func(p stores.Page) error {
			if len(p.Items) == 0 {
				return nil
			}
			tb, err := stores.Table(ctx, t, p.List)
			if err != nil {
				return err
			}
			return add(tb)
		})
		if !stores.WalkedToEnd(err) {
			return nil, listCut(ctx, t, err)
		}
		unreadable = cmp.Or(unreadable, err)
	}
	return unreadable, nil
}

// listObjects streams each type's objects, page by page, into one yaml or
// json List (or names). A list that stops before its end leaves the
// document open, so it never passes for the whole.
func listObjects(ctx context.Context, targets []handle.Target, o *Options, out *bufio.Writer) error {
	o.boundHeap()
	lw := o.Print.NewListWriter(o.Out, o.Output)
	var unreadable error
	for _, t := range targets {
		err := stores.List(ctx, t, o.listOptions(), func(p stores.Page) error {
			for _, item := range p.Items {
				obj, err := o.printed(t, item)
				if err != nil {
					return err
				}
				if err := lw.Add(obj); err != nil {
					return err
				}
			}
			return out.Flush()
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

// printed is a listed item as it is printed: in the served version,
// trimmed; with -o name, as its kind and name alone, all that kubectl's
// name printer reads of it, which spares converting every item.
func (o *Options) printed(t handle.Target, item runtime.Object) (runtime.Object, error) {
	if o.Output == render.Name && !o.Print.HoldsObjects() {
		m, err := meta.Accessor(item)
		if err != nil {
			return nil, fmt.Errorf("reading the name of a %s: %w", t.Resource.Kind, err)
		}
		return render.NameOnly(t.GroupVersion().WithKind(t.Resource.Kind), m.GetNamespace(), m.GetName()), nil
	}
	obj, err := stores.ListItemToExternal(t, item)
	if err != nil {
		return nil, err
	}
	return o.trim(obj), nil
}

// listCut is the error of a list that stopped before its end: the
// context's own error names what was being listed, other errors do.
func listCut(ctx context.Context, t handle.Target, err error) error {
	if err == ctx.Err() {
		return fmt.Errorf("listing %s: %w", t.Path, err)
	}
	return err
}

// NoResources is what kubectl says when a list finds nothing: the
// namespace, when every type was listed in one.
func NoResources(targets []handle.Target) string {
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
func (o *Options) boundHeap() {
	if !o.Print.HoldsObjects() {
		gctune.BoundHeap()
	}
}

// newTable starts a table of t's objects for kubectl's table printer, which
// reads, for --sort-by, each row's object in the served version.
func (o *Options) newTable(t handle.Target, withNamespace bool) *render.ObjectTable {
	kind := schema.GroupKind{Group: t.Resource.Group, Kind: t.Resource.Kind}
	return o.Print.NewTable(kind, withNamespace, func(obj runtime.Object) (runtime.Object, error) {
		return stores.ListItemToExternal(t, obj)
	})
}

// trim hides managedFields unless asked, as kubectl does.
func (o *Options) trim(obj runtime.Object) runtime.Object {
	if o.ShowManagedFields {
		return obj
	}
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj
}
