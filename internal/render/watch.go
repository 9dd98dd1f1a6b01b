package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"
)

// WatchPrinter prints what a watch sees as kubectl get --watch prints it
// (k8s.io/kubectl/pkg/cmd/get, func watch): a table's header once, above
// its first row, then rows aligned with the rows above them; yaml documents
// separated by `---`; json objects one after another; kind/name lines; or
// each object through kubectl's template or column printer. With events,
// each object is a watch event: an EVENT column first, or a
// `{"type":...,"object":...}` object, one json object per line.
type WatchPrinter struct {
	w      io.Writer
	format Format
	events bool
	flags  *GetPrintFlags
	// table is kubectl get's table printer with kubectl's flags: it prints
	// the header once and adds the EVENT, NAMESPACE and label columns.
	table printers.ResourcePrinter
	// names is kubectl's -o name printer.
	names printers.ResourcePrinter
	// tw is kubectl's tabwriter, which remembers column widths across
	// flushes, so that a row printed alone lines up with those before it.
	// It writes to buf, printed at each Flush.
	tw   flushWriter
	buf  bytes.Buffer
	docs int
}

type flushWriter interface {
	io.Writer
	Flush() error
}

// NewWatchPrinter prints kind's objects in format, with the output options
// in f; events wraps each object as a watch event; withNamespace adds a
// NAMESPACE column to tables.
func (f *GetPrintFlags) NewWatchPrinter(w io.Writer, format Format, kind schema.GroupKind, events, withNamespace bool) (*WatchPrinter, error) {
	p := &WatchPrinter{w: w, format: format, events: events, flags: f}
	p.tw = printers.GetNewTabWriter(&p.buf)
	if format == Table || format == Wide {
		table, err := f.humanPrinter(kind, withNamespace, false, format == Wide)
		if err != nil {
			return nil, fmt.Errorf("making the table printer: %w", err)
		}
		p.table = table
	}
	if format == Name {
		names, err := NamePrinter("")
		if err != nil {
			return nil, err
		}
		p.names = names
	}
	return p, nil
}

// Warning is what kubectl warns of for these options in watch mode, or "".
func (p *WatchPrinter) Warning() string {
	if p.flags.sortBy() != "" {
		return "warning: --watch requested, --sort-by will be ignored"
	}
	return ""
}

// Table adds the rows of a server-side table, each from a change of type
// eventType (ADDED, MODIFIED, DELETED). Rows are aligned together up to the
// next Flush, which prints them.
func (p *WatchPrinter) Table(eventType string, table *metav1.Table) error {
	if p.table == nil {
		return fmt.Errorf("output format %q cannot print tables", p.format)
	}
	var obj runtime.Object = table
	if p.events {
		obj = &metav1.WatchEvent{Type: eventType, Object: runtime.RawExtension{Object: table}}
	}
	if err := p.table.PrintObj(obj, p.tw); err != nil {
		return fmt.Errorf("printing the table: %w", err)
	}
	return nil
}

// Flush prints the rows, or the template output, added since the last
// Flush, as kubectl get -w prints them: table lines keep the padding
// kubectl's tabwriter leaves after an empty last cell.
func (p *WatchPrinter) Flush() error {
	if err := p.tw.Flush(); err != nil {
		return err
	}
	defer p.buf.Reset()
	_, err := p.w.Write(p.buf.Bytes())
	return err
}

// Object prints one object in the served version, from a change of type
// eventType. Template and column output waits for Flush.
func (p *WatchPrinter) Object(eventType string, obj runtime.Object) error {
	var v any = obj
	if p.events {
		v = &metav1.WatchEvent{Type: eventType, Object: runtime.RawExtension{Object: obj}}
	}
	switch p.format {
	case Name:
		return p.names.PrintObj(obj, p.w)
	case JSON:
		if !p.events {
			return PrintObject(p.w, JSON, obj)
		}
		// kubectl prints an event as one line of compact json, its object
		// as unstructured, fields in name order.
		u, err := toUnstructured(obj)
		if err != nil {
			return err
		}
		out, err := json.Marshal(&metav1.WatchEvent{Type: eventType, Object: runtime.RawExtension{Object: u}})
		if err != nil {
			return fmt.Errorf("encoding json: %w", err)
		}
		_, err = p.w.Write(append(out, '\n'))
		return err
	case YAML:
		if p.docs > 0 {
			if _, err := io.WriteString(p.w, "---\n"); err != nil {
				return err
			}
		}
		p.docs++
		return Print(p.w, YAML, v)
	case Custom:
		return p.custom(eventType, obj)
	}
	return fmt.Errorf("output format %q cannot print objects", p.format)
}

// custom prints through kubectl's template or column printer what kubectl
// gives it: the object, or the event in its JSON form.
func (p *WatchPrinter) custom(eventType string, obj runtime.Object) error {
	u, err := toUnstructured(obj)
	if err != nil {
		return err
	}
	if p.events {
		u = &unstructured.Unstructured{Object: map[string]any{"type": eventType, "object": u.Object}}
	}
	return p.flags.printCustom(p.tw, u)
}
