package render

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/cmd/get"

	"github.com/liggitt/tabwriter"
)

// ObjectTable accumulates the server-side tables (metav1.Table) of one or
// more pages, or of several objects, and prints them with kubectl get's own
// table printer: upper-case column names, priority-0 columns unless wide,
// a NAMESPACE column across namespaces, label columns, sorting. The zero
// value prints as kubectl get does without options; GetPrintFlags.NewTable
// makes one that follows kubectl's flags.
type ObjectTable struct {
	WithNamespace bool
	// WithKind prefixes names with their kind (pod/web), as kubectl does
	// when it prints tables of several types.
	WithKind bool

	flags  *GetPrintFlags
	kind   schema.GroupKind
	served func(runtime.Object) (runtime.Object, error)
	table  metav1.Table
	// err is the first row that could not be kept; printing returns it.
	err error
}

// Append adds the rows of one table. Each row keeps its cells and, of its
// object, what kubectl's printer reads (see rowObject).
func (t *ObjectTable) Append(table *metav1.Table) {
	if t.err != nil {
		return
	}
	if t.table.ColumnDefinitions == nil {
		t.table.ColumnDefinitions = table.ColumnDefinitions
	}
	for _, row := range table.Rows {
		obj, err := t.rowObject(row.Object.Object)
		if err != nil {
			t.err = err
			return
		}
		row.Object = runtime.RawExtension{Object: obj}
		t.table.Rows = append(t.table.Rows, row)
	}
}

// rowObject is what a row keeps of its object. By default that is what the
// apiserver's table response carries (includeObject=Metadata): the object's
// metadata, as meta.AsPartialObjectMetadata makes it, from which kubectl
// prints namespaces and labels; without managedFields, which nothing prints,
// so that a long list holds little per row. --sort-by reads any field, so
// then the row keeps the whole object in its served version, in the JSON
// form kubectl asks for then (includeObject=Object).
func (t *ObjectTable) rowObject(obj runtime.Object) (runtime.Object, error) {
	if obj == nil {
		return nil, nil
	}
	if by := t.flags.sortBy(); by != "" && t.served != nil {
		return t.wholeObject(obj, by)
	}
	return partialMetadata(obj)
}

// partialMetadata is an object's metadata, as meta.AsPartialObjectMetadata
// makes it, without managedFields.
func partialMetadata(obj runtime.Object) (runtime.Object, error) {
	if obj == nil {
		return nil, nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, fmt.Errorf("reading the metadata of a table row: %w", err)
	}
	partial := meta.AsPartialObjectMetadata(m)
	partial.ManagedFields = nil
	partial.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("PartialObjectMetadata"))
	return partial, nil
}

func (t *ObjectTable) wholeObject(obj runtime.Object, by string) (runtime.Object, error) {
	ext, err := t.served(obj)
	if err != nil {
		return nil, err
	}
	// Only a sort by managedFields needs them. The served object is the
	// row's own (the store's object is not used again), so they are dropped
	// before the conversion rather than converted and dropped.
	if !strings.Contains(by, "managedFields") {
		if m, err := meta.Accessor(ext); err == nil {
			m.SetManagedFields(nil)
		}
	}
	u, err := toUnstructured(ext)
	if err != nil {
		return nil, err
	}
	return u, nil
}

// Len is the number of rows.
func (t *ObjectTable) Len() int { return len(t.table.Rows) }

// print writes the table as kubectl get prints a table from the server:
// sorted by --sort-by as kubectl sorts one (its RuntimeSorter, then its
// SortingPrinter), by kubectl's printer. A table is printed once: kubectl's
// printer decorates the rows in place.
func (t *ObjectTable) print(w io.Writer, wide bool) error {
	if t.err != nil {
		return t.err
	}
	p, err := t.flags.humanPrinter(t.kind, t.WithNamespace, t.WithKind, wide)
	if err != nil {
		return fmt.Errorf("making the table printer: %w", err)
	}
	if by := t.flags.sortBy(); by != "" {
		if err := get.NewRuntimeSorter([]runtime.Object{&t.table}, by).Sort(); err != nil {
			return fmt.Errorf("sorting by %q: %w", by, err)
		}
		p = &get.SortingPrinter{Delegate: p, SortField: by}
	}
	// Written as kubectl prints it, padding after an empty last cell
	// included (componentstatuses' ERROR), so that regctl's and kubectl's
	// output diff clean; and whole, or not at all.
	var buf bytes.Buffer
	if err := p.PrintObj(&t.table, &buf); err != nil {
		return fmt.Errorf("printing the table: %w", err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// humanPrinter is kubectl get's printer for server-side tables, with the
// options kubectl's flags give it; f may be nil for kubectl's defaults.
func (f *GetPrintFlags) humanPrinter(kind schema.GroupKind, withNamespace, withKind, wide bool) (printers.ResourcePrinter, error) {
	h := *get.NewHumanPrintFlags()
	if f != nil {
		h = *f.kubectl.HumanReadableFlags
		h.NoHeaders = *f.kubectl.NoHeaders
	}
	h.SetKind(kind)
	if withKind {
		if err := h.EnsureWithKind(); err != nil {
			return nil, err
		}
	}
	if withNamespace {
		if err := h.EnsureWithNamespace(); err != nil {
			return nil, err
		}
	}
	output := ""
	if wide {
		output = "wide"
	}
	return h.ToPrinter(output)
}

// writeTrimmed writes one of regctl's own tables (routes, scan...: none
// that kubectl prints) without the padding left at the ends of lines whose
// last cells are empty, so that it diffs cleanly.
func writeTrimmed(w io.Writer, table string) error {
	for _, line := range strings.SplitAfter(table, "\n") {
		if line == "" {
			continue
		}
		if _, err := io.WriteString(w, strings.TrimRight(line, " \n")+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// PrintTables prints the tables of one or more types one after another, as
// kubectl get does: a table without rows prints nothing, and a blank line
// separates a table from the one printed before it, unless --no-headers.
// printed tells whether any row was printed.
func PrintTables(w io.Writer, f Format, tables []*ObjectTable) (printed bool, err error) {
	for _, t := range tables {
		if t.Len() == 0 {
			continue
		}
		if printed && (t.flags == nil || !*t.flags.kubectl.NoHeaders) {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return printed, err
			}
		}
		if err := Print(w, f, t); err != nil {
			return printed, err
		}
		printed = true
	}
	return printed, nil
}

// TableStream prints the tables of a list page by page, as they are read,
// the way kubectl get --watch prints rows: the header once, above a type's
// first row, and each page lined up with the pages before it (kubectl's
// tabwriter remembers column widths across flushes, which only grow), so
// that memory does not grow with the list. A list of one page prints as
// kubectl get prints it. --sort-by needs every row first and is printed
// whole (ObjectTable).
type TableStream struct {
	w       io.Writer
	flags   *GetPrintFlags
	wide    bool
	tw      *tabwriter.Writer
	printer printers.ResourcePrinter
	// rows counts the rows of the current type; printed, of all types.
	rows, printed int
}

// NewTableStream starts printing tables to w, wide or not.
func (f *GetPrintFlags) NewTableStream(w io.Writer, wide bool) *TableStream {
	return &TableStream{w: w, flags: f, wide: wide, tw: printers.GetNewTabWriter(w)}
}

// Start starts the table of a type: its own header and column widths, a
// blank line after the table before it unless --no-headers (as
// PrintTables), names prefixed with the kind when several types are
// printed.
func (s *TableStream) Start(kind schema.GroupKind, withNamespace, withKind bool) error {
	if err := s.tw.Flush(); err != nil {
		return err
	}
	s.tw.SetRememberedWidths(nil)
	p, err := s.flags.humanPrinter(kind, withNamespace, withKind, s.wide)
	if err != nil {
		return fmt.Errorf("making the table printer: %w", err)
	}
	s.printer, s.rows = p, 0
	return nil
}

// Append prints the rows of one page of the current type.
func (s *TableStream) Append(table *metav1.Table) error {
	if len(table.Rows) == 0 {
		return nil
	}
	if s.rows == 0 && s.printed > 0 && (s.flags == nil || !*s.flags.kubectl.NoHeaders) {
		if _, err := io.WriteString(s.w, "\n"); err != nil {
			return err
		}
	}
	for i, row := range table.Rows {
		obj, err := partialMetadata(row.Object.Object)
		if err != nil {
			return err
		}
		table.Rows[i].Object = runtime.RawExtension{Object: obj}
	}
	if err := s.printer.PrintObj(table, s.tw); err != nil {
		return fmt.Errorf("printing the table: %w", err)
	}
	s.rows += len(table.Rows)
	s.printed += len(table.Rows)
	return s.tw.Flush()
}

// Printed tells whether any row was printed.
func (s *TableStream) Printed() bool { return s.printed > 0 }
