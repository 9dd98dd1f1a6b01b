package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubectl/pkg/cmd/get"
)

var ownFormats = []Format{Table, Wide, YAML, JSON, Name}

// parsedFlags is kubectl's output flags as a command line sets them.
func parsedFlags(t *testing.T, args ...string) (*GetPrintFlags, *cobra.Command) {
	t.Helper()
	f := NewGetPrintFlags()
	cmd := &cobra.Command{Use: "get"}
	cmd.Flags().StringP("output", "o", "table", "")
	f.AddFlags(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	return f, cmd
}

func TestGetFormat(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want Format
		err  string
	}{
		{args: nil, want: Table},
		{args: []string{"-o", "wide", "-L", "app", "--no-headers"}, want: Wide},
		{args: []string{"-o", "yaml", "--template", "{{.kind}}"}, want: YAML},
		{args: []string{"-o", "jsonpath={.items[*].metadata.name}"}, want: Custom},
		{args: []string{"-o", "custom-columns=NAME:.metadata.name"}, want: Custom},
		{args: []string{"-o", "go-template={{.kind}}"}, want: Custom},
		{args: []string{"--template", "{{.kind}}"}, want: Custom},
		{args: []string{"-o", "jsonpath", "--template", "{.kind}"}, want: Custom},
		{args: []string{"-o", "xml"}, err: `unknown output format "xml": valid values are table|wide|yaml|json|name|go-template|`},
		{args: []string{"-o", "jsonpath={.items["}, err: "reading `--output`: error parsing jsonpath"},
		{args: []string{"-o", "jsonpath"}, err: "template format specified but no template given"},
		{args: []string{"-o", "yaml", "--show-labels"}, err: "`--show-labels` cannot be used with `-o yaml`"},
		{args: []string{"--sort-by", "{.metadata.name["}, err: "parsing `--sort-by`"},
	} {
		f, cmd := parsedFlags(t, tc.args...)
		output, _ := cmd.Flags().GetString("output")
		got, err := f.Format(output, cmd.Flags().Changed("output"), ownFormats...)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want one containing %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.args, got, err, tc.want)
		}
	}
}

func testPod(ns, name, node string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, Labels: map[string]string{"app": name},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		},
		Spec: corev1.PodSpec{NodeName: node},
	}
}

func TestHeldListsPrintOnceWhole(t *testing.T) {
	f, cmd := parsedFlags(t, "-o", "name", "--sort-by", ".spec.nodeName")
	if _, err := f.Format("name", cmd.Flags().Changed("output"), ownFormats...); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	l := f.NewListWriter(&out, Name)
	for _, p := range []*corev1.Pod{testPod("a", "x", "n2"), testPod("a", "y", "n1"), testPod("a", "z", "n3")} {
		if err := l.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	if out.Len() != 0 {
		t.Errorf("a sorted list printed before it was whole: %q", out.String())
	}
	if err := l.Close(); err != nil || out.String() != "pod/y\npod/x\npod/z\n" {
		t.Errorf("sorted names %q, %v", out.String(), err)
	}

	// A held list cut short prints no object: yaml only the marker that
	// no parser accepts, a template nothing.
	for _, args := range [][]string{{"-o", "yaml", "--sort-by", ".spec.nodeName"}, {"-o", "jsonpath={.items[*].metadata.name}"}} {
		f, cmd := parsedFlags(t, args...)
		format, err := f.Format(args[1], cmd.Flags().Changed("output"), ownFormats...)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		l := f.NewListWriter(&out, format)
		if err := l.Add(testPod("a", "x", "n1")); err != nil {
			t.Fatal(err)
		}
		if err := l.Cut(); err != nil || strings.Contains(out.String(), "x") {
			t.Errorf("%q cut: %q, %v", args, out.String(), err)
		}
	}
}

func TestTemplatesSeeTheListKubectlMakes(t *testing.T) {
	f, cmd := parsedFlags(t, "-o", `go-template={{.kind}} {{.metadata.resourceVersion | printf "%q"}}{{range .items}} {{.metadata.name}}/{{.spec.nodeName}}{{end}}`)
	output, _ := cmd.Flags().GetString("output")
	if _, err := f.Format(output, true, ownFormats...); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	l := f.NewListWriter(&out, Custom)
	for _, p := range []*corev1.Pod{testPod("a", "x", "n2"), testPod("b", "y", "")} {
		if err := l.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil || out.String() != `List "" x/n2 y/<no value>` {
		t.Errorf("template printed %q, %v", out.String(), err)
	}
}

func TestTableRowsKeepWhatThePrinterReads(t *testing.T) {
	pod := testPod("shop", "web", "node-1")
	table := func() *metav1.Table {
		return &metav1.Table{
			ColumnDefinitions: []metav1.TableColumnDefinition{{Name: "Name"}},
			Rows:              []metav1.TableRow{{Cells: []any{"web"}, Object: runtime.RawExtension{Object: pod}}},
		}
	}
	f, _ := parsedFlags(t)
	served := func(obj runtime.Object) (runtime.Object, error) { return obj, nil }
	kind := schema.GroupKind{Kind: "Pod"}

	// By default a row keeps its object's metadata, without managedFields.
	plain := f.NewTable(kind, true, served)
	plain.Append(table())
	m, ok := plain.table.Rows[0].Object.Object.(*metav1.PartialObjectMetadata)
	if !ok || m.Labels["app"] != "web" || m.Namespace != "shop" || m.ManagedFields != nil {
		t.Errorf("row object %#v: want the metadata alone, without managedFields", plain.table.Rows[0].Object.Object)
	}
	if pod.ManagedFields == nil {
		t.Error("the store's object lost its managedFields")
	}

	// --sort-by reads any field: the row keeps the whole object.
	f, _ = parsedFlags(t, "--sort-by", ".spec.nodeName")
	sorted := f.NewTable(kind, true, served)
	sorted.Append(table())
	u, ok := sorted.table.Rows[0].Object.Object.(*unstructured.Unstructured)
	if node, _, _ := unstructured.NestedString(u.Object, "spec", "nodeName"); !ok || node != "node-1" || u.GetManagedFields() != nil {
		t.Errorf("row object %#v: want the whole object, without managedFields", sorted.table.Rows[0].Object.Object)
	}
	var out bytes.Buffer
	if err := Print(&out, Table, sorted); err != nil || out.String() != "NAMESPACE   NAME\nshop        web\n" {
		t.Errorf("table %q, %v", out.String(), err)
	}
}

// Names with -o name are what kubectl get's printer prints of the same
// objects, group included: a core kind, a kind of a named group and a
// custom resource; in a list and in a watch.
func TestNamesAreKubectlGets(t *testing.T) {
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "shop"},
	}}
	deployment := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"}}
	objs := []runtime.Object{pod("p"), deployment, widget}

	kubectl := get.NewGetPrintFlags()
	*kubectl.OutputFormat = "name"
	printer, err := kubectl.ToPrinter()
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	for _, obj := range objs {
		if err := printer.PrintObj(obj, &want); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(want.String(), "deployment.apps/web\n") {
		t.Fatalf("kubectl prints %q: no group, the comparison proves nothing", want.String())
	}

	var list, watched bytes.Buffer
	l := NewListWriter(&list, Name)
	f, _ := parsedFlags(t)
	wp, err := f.NewWatchPrinter(&watched, Name, schema.GroupKind{}, false, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		if err := l.Add(obj); err != nil {
			t.Fatal(err)
		}
		if err := wp.Object("ADDED", obj); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if list.String() != want.String() || watched.String() != want.String() {
		t.Errorf("list %q, watch %q; kubectl get prints %q", list.String(), watched.String(), want.String())
	}
}
