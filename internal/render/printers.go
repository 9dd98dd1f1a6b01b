package render

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/util/jsonpath"
	"k8s.io/kubectl/pkg/cmd/get"
)

// Custom is the format of kubectl's template and column printers: -o
// jsonpath=..., custom-columns=..., go-template=..., their -file forms, and
// --template. Such a printer sees the whole list at once, so the list is
// printed only once every object has been read.
const Custom Format = "custom"

// GetPrintFlags are kubectl get's output options, held in kubectl's own
// get.PrintFlags so that kubectl's printers read them as kubectl sets them:
// the -o values beyond regctl's own formats, --template,
// --allow-missing-template-keys, --no-headers, --show-labels,
// -L/--label-columns, --sort-by and --show-kind.
type GetPrintFlags struct {
	kubectl *get.PrintFlags
	output  string
	format  Format
	// custom is kubectl's printer for the Custom format. It is built when -o
	// is read, so that a template that does not parse is refused before
	// anything is read.
	custom printers.ResourcePrinter
}

// NewGetPrintFlags returns kubectl get's output options at their defaults.
func NewGetPrintFlags() *GetPrintFlags {
	return &GetPrintFlags{kubectl: get.NewGetPrintFlags()}
}

// AddFlags binds kubectl's output flags to cmd, with kubectl's names, defaults
// and help. -o is left to the command, which knows its own formats.
func (f *GetPrintFlags) AddFlags(cmd *cobra.Command) {
	f.kubectl.HumanReadableFlags.AddFlags(cmd)
	f.kubectl.TemplateFlags.AddFlags(cmd)
	// kubectl binds --no-headers together with -o, so it is bound here alone,
	// with kubectl's help.
	cmd.Flags().BoolVar(f.kubectl.NoHeaders, "no-headers", *f.kubectl.NoHeaders,
		"When using the default or custom-column output format, don't print headers (default print headers).")
}

// Format reads -o once the flags are parsed: one of regctl's own formats
// (own), or one of kubectl's template and column formats, for which it
// returns Custom. As in kubectl, --template without -o is a go-template.
// A template or column spec that does not parse, --show-labels outside a
// table, and a --sort-by that is no JSONPath are refused here, before
// anything is read.
func (f *GetPrintFlags) Format(output string, outputSet bool, own ...Format) (Format, error) {
	f.output = output
	format, err := f.parse(output, outputSet, own)
	if err != nil {
		return "", err
	}
	f.format = format
	return format, f.check()
}

func (f *GetPrintFlags) parse(output string, outputSet bool, own []Format) (Format, error) {
	templated := *f.kubectl.TemplateFlags.TemplateArgument != "" && !outputSet
	if format, err := ParseFormat(output, own...); err == nil && !templated {
		return format, nil
	}
	if templated {
		output = "go-template"
	}
	p, err := f.customPrinter(output)
	if genericclioptions.IsNoCompatiblePrinterError(err) {
		return "", fmt.Errorf("unknown output format %q: valid values are %s", output, f.validFormats(own))
	}
	if err != nil {
		return "", fmt.Errorf("reading `--output`: %w", err)
	}
	f.custom = p
	return Custom, nil
}

// customPrinter asks kubectl's template flags, then its custom-columns
// flags, for a printer for output, as kubectl's get.PrintFlags does.
func (f *GetPrintFlags) customPrinter(output string) (printers.ResourcePrinter, error) {
	k := f.kubectl
	if p, err := k.TemplateFlags.ToPrinter(output); !genericclioptions.IsNoCompatiblePrinterError(err) {
		return p, err
	}
	k.CustomColumnsFlags.TemplateArgument = *k.TemplateFlags.TemplateArgument
	k.CustomColumnsFlags.NoHeaders = *k.NoHeaders
	return k.CustomColumnsFlags.ToPrinter(output)
}

func (f *GetPrintFlags) validFormats(own []Format) string {
	var names []string
	for _, format := range own {
		names = append(names, string(format))
	}
	for _, format := range f.KubectlFormats() {
		names = append(names, string(format))
	}
	return strings.Join(names, "|")
}

// KubectlFormats are the -o values kubectl's template and column printers
// take (each followed by = and its template), as kubectl lists them.
func (f *GetPrintFlags) KubectlFormats() []Format {
	var out []Format
	for _, name := range append(f.kubectl.TemplateFlags.AllowedFormats(), f.kubectl.CustomColumnsFlags.AllowedFormats()...) {
		out = append(out, Format(name))
	}
	return out
}

// check refuses what kubectl refuses, and a --sort-by that cannot be read,
// which kubectl would find out only once the list has been read.
func (f *GetPrintFlags) check() error {
	if *f.kubectl.HumanReadableFlags.ShowLabels && f.format != Table && f.format != Wide {
		return fmt.Errorf("`--show-labels` cannot be used with `-o %s`: it adds a column to a table", f.output)
	}
	if by := f.sortBy(); by != "" {
		if err := jsonpath.New("sort-by").Parse(sortField(by)); err != nil {
			return fmt.Errorf("parsing `--sort-by` %q: %w", by, err)
		}
	}
	return nil
}

// sortField is the JSONPath kubectl's sorters make of --sort-by.
func sortField(by string) string {
	if field, err := get.RelaxedJSONPathExpression(by); err == nil {
		return field
	}
	return by
}

func (f *GetPrintFlags) sortBy() string {
	if f == nil {
		return ""
	}
	return *f.kubectl.HumanReadableFlags.SortBy
}

// HoldsObjects tells whether the output needs every object in memory before
// it prints anything: with --sort-by, or for kubectl's template and column
// printers. Other lists are printed page by page, or, as tables, hold only
// cells and metadata.
func (f *GetPrintFlags) HoldsObjects() bool {
	return f.format == Custom || f.sortBy() != ""
}

// NewTable starts a table of kind's objects for the table and wide formats,
// printed with these options. served converts a row's object, as the store
// holds it, to its served version; it is called only for --sort-by, which
// reads the whole object.
func (f *GetPrintFlags) NewTable(kind schema.GroupKind, withNamespace bool, served func(runtime.Object) (runtime.Object, error)) *ObjectTable {
	return &ObjectTable{WithNamespace: withNamespace, flags: f, kind: kind, served: served}
}

// NewListWriter starts a list in format. yaml, json and name stream object
// by object, unless --sort-by, which orders them once the list is whole;
// Custom keeps the list for kubectl's printer.
func (f *GetPrintFlags) NewListWriter(w io.Writer, format Format) *ListWriter {
	l := NewListWriter(w, format)
	if f.HoldsObjects() {
		l.held = &heldList{flags: f}
	}
	return l
}

// PrintObject prints one object in format: the object itself, never a list.
func (f *GetPrintFlags) PrintObject(w io.Writer, format Format, obj runtime.Object) error {
	if format != Custom {
		return PrintObject(w, format, obj)
	}
	u, err := toUnstructured(obj)
	if err != nil {
		return err
	}
	return f.printCustom(w, u)
}

// printCustom prints an object or a List with kubectl's template or column
// printer, sorted as kubectl sorts for it.
func (f *GetPrintFlags) printCustom(w io.Writer, obj runtime.Object) error {
	p := f.custom
	if by := f.sortBy(); by != "" {
		p = &get.SortingPrinter{Delegate: p, SortField: by}
	}
	if err := p.PrintObj(obj, w); err != nil {
		return fmt.Errorf("printing with `-o %s`: %w", f.output, templateError(err))
	}
	return nil
}

// templateError keeps the first part of a template printer's error: the
// rest is a dump of everything the template was given, for a list every
// object read.
func templateError(err error) error {
	msg, _, found := strings.Cut(err.Error(), " Printing more information for debugging the template:")
	if !found {
		return err
	}
	return errors.New(strings.TrimSuffix(msg, "."))
}

// toUnstructured is an object in the form kubectl reads from the server's
// JSON: field names as served, absent fields absent, integers as int64.
// kubectl's sorters, column and template printers look fields up in it.
func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %s to its JSON form: %w", printers.GetObjectGroupKind(obj), err)
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// heldList is a list that is printed only once whole: sorted by --sort-by,
// or given to one of kubectl's template and column printers.
type heldList struct {
	flags *GetPrintFlags
	objs  []runtime.Object
}

// add keeps obj: in its JSON form for kubectl's printers, as it is for
// regctl's own formats, which print it as always.
func (h *heldList) add(format Format, obj runtime.Object) error {
	if format == Custom {
		u, err := toUnstructured(obj)
		if err != nil {
			return err
		}
		obj = u
	}
	h.objs = append(h.objs, obj)
	return nil
}

// customList is the List kubectl gives its printers for several objects.
func (h *heldList) customList() *unstructured.UnstructuredList {
	list := &unstructured.UnstructuredList{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "List",
		"metadata":   map[string]any{"resourceVersion": ""},
	}}
	list.Items = make([]unstructured.Unstructured, len(h.objs))
	for i, obj := range h.objs {
		list.Items[i] = *obj.(*unstructured.Unstructured)
	}
	return list
}

// sorted is the objects in --sort-by order, as kubectl's sorter orders the
// items of a list by their JSON form; the objects themselves are printed.
func (h *heldList) sorted() ([]runtime.Object, error) {
	by := h.flags.sortBy()
	if by == "" {
		return h.objs, nil
	}
	forms := make([]runtime.Object, len(h.objs))
	for i, obj := range h.objs {
		u, err := toUnstructured(obj)
		if err != nil {
			return nil, err
		}
		forms[i] = u
	}
	sorter := get.NewRuntimeSorter(forms, by)
	if err := sorter.Sort(); err != nil {
		return nil, fmt.Errorf("sorting by %q: %w", by, err)
	}
	out := make([]runtime.Object, len(h.objs))
	for i := range out {
		out[i] = h.objs[sorter.OriginalPosition(i)]
	}
	return out, nil
}
