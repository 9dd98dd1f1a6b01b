package render

import (
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"

	"github.com/regctl/regctl/internal/render/itemjson"
)

// ListWriter prints Kubernetes objects one at a time, so a list of any
// length is printed with flat memory. In yaml and json the objects form a
// `kind: List` document, as kubectl prints several objects; with -o name
// each is a kind/name line.
type ListWriter struct {
	w      io.Writer
	format Format
	n      int
	// Buffers reused object after object.
	json itemjson.Writer
	out  []byte
	// names is kubectl's -o name printer, made at the first name.
	names printers.ResourcePrinter
	// held keeps the objects of a list printed only once whole (--sort-by,
	// kubectl's template and column printers); nil streams them.
	held *heldList
}

// NewListWriter starts a list in format (yaml, json or name).
func NewListWriter(w io.Writer, format Format) *ListWriter {
	return &ListWriter{w: w, format: format}
}

// Add prints one object, or keeps it for a list printed once whole.
func (l *ListWriter) Add(obj runtime.Object) error {
	if l.held != nil {
		return l.held.add(l.format, obj)
	}
	return l.add(obj)
}

func (l *ListWriter) add(obj runtime.Object) error {
	defer func() { l.n++ }()
	switch l.format {
	case Name:
		if l.names == nil {
			p, err := NamePrinter("")
			if err != nil {
				return err
			}
			l.names = p
		}
		return l.names.PrintObj(obj, l.w)
	case JSON:
		out, err := l.json.Item(l.out[:0], l.n, obj)
		l.out = out
		if err != nil {
			return err
		}
		_, err = l.w.Write(out)
		return err
	case YAML:
		// kubectl marshals the whole List, whose items sit at column 0 as
		// "- " entries; go-yaml folds long strings and writes blank lines of
		// block scalars by the column it is at. A one-item sequence puts the
		// item at the same column with the same indentation, so each item
		// is written as it would be inside the list, one at a time.
		out, err := yaml.Marshal([]runtime.Object{obj})
		if err != nil {
			return fmt.Errorf("encoding yaml: %w", err)
		}
		if l.n == 0 {
			if _, err := io.WriteString(l.w, "apiVersion: v1\nitems:\n"); err != nil {
				return err
			}
		}
		_, err = l.w.Write(out)
		return err
	}
	return fmt.Errorf("output format %q cannot print objects", l.format)
}

// Close ends the list document, and prints a held list. Call it only when
// every object has been added: a closed document says the list is whole.
func (l *ListWriter) Close() error {
	if h := l.held; h != nil {
		l.held = nil
		return l.printHeld(h)
	}
	var err error
	switch l.format {
	case JSON:
		_, err = io.WriteString(l.w, itemjson.End(l.n))
	case YAML:
		head := ""
		if l.n == 0 {
			head = "apiVersion: v1\nitems: []\n"
		}
		_, err = io.WriteString(l.w, head+"kind: List\nmetadata:\n  resourceVersion: \"\"\n")
	}
	return err
}

// cutMarker ends a yaml or json list that stopped before its end. A plain
// scalar cannot start with '@' (a reserved indicator), so no YAML parser
// accepts the line, and a JSON document left open stays invalid: whatever
// reads the output fails instead of taking part of a list for all of it.
const cutMarker = "@incomplete: reading stopped before the end of the list; see the error on stderr\n"

// Cut ends a list whose reading stopped early (a timeout, an interrupt, an
// etcd error) without closing its document, so that what was printed cannot
// pass for the whole list, nor an empty output for an empty one. Names are
// lines and have no document to leave open.
func (l *ListWriter) Cut() error {
	return cut(l.w, l.format, l.n)
}

// printHeld prints a list held whole: to kubectl's printer as the List
// kubectl makes of several objects, or object by object, in --sort-by
// order, as a streamed list is printed.
func (l *ListWriter) printHeld(h *heldList) error {
	if l.format == Custom {
		return h.flags.printCustom(l.w, h.customList())
	}
	objs, err := h.sorted()
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if err := l.add(obj); err != nil {
			return err
		}
	}
	return l.Close()
}

func cut(w io.Writer, format Format, n int) error {
	if format != JSON && format != YAML {
		return nil
	}
	marker := cutMarker
	if format == JSON && n > 0 {
		// The last object has no line end yet.
		marker = "\n" + marker
	}
	_, err := io.WriteString(w, marker)
	return err
}

// PrintObject prints one Kubernetes object as kubectl prints it: yaml and
// json with cli-runtime's printers, the object itself and not a List.
func PrintObject(w io.Writer, format Format, obj runtime.Object) error {
	var p printers.ResourcePrinter
	switch format {
	case JSON:
		// kubectl holds what it prints as unstructured, whose fields
		// encoding/json writes in name order.
		u, err := toUnstructured(obj)
		if err != nil {
			return err
		}
		obj = u
		p = &printers.JSONPrinter{}
	case YAML:
		p = &printers.YAMLPrinter{}
	default:
		return Print(w, format, obj)
	}
	if err := p.PrintObj(obj, w); err != nil {
		return fmt.Errorf("printing %s: %w", format, err)
	}
	return nil
}

// NamePrinter is kubectl's name printer, as kubectl's commands get it from
// their print flags: "kind.group/name" lines, the group from the object's
// GroupVersionKind (the core group has none). With an operation, as a
// write without -o reports, each name is followed by it:
// "deployment.apps/web created"; without, it prints what -o name prints.
func NamePrinter(operation string) (printers.ResourcePrinter, error) {
	flags := genericclioptions.NewPrintFlags(operation)
	if operation == "" {
		*flags.OutputFormat = string(Name)
	}
	p, err := flags.ToPrinter()
	if err != nil {
		return nil, fmt.Errorf("making kubectl's name printer: %w", err)
	}
	return p, nil
}

// NameOnly stands for an object known only by its kind and name, for
// kubectl's name printer, which reads nothing else.
func NameOnly(gvk schema.GroupVersionKind, namespace, name string) runtime.Object {
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	obj.SetGroupVersionKind(gvk)
	return obj
}
