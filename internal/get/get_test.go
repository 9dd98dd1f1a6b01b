package get

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/render"
)

func TestValidateNeedsNoEtcd(t *testing.T) {
	for _, tc := range []struct {
		name     string
		o        Options
		snapshot string
		want     string // "" is valid
	}{
		{"nothing", Options{}, "", ""},
		{"watch", Options{Watch: true}, "", ""},
		{"watch a snapshot", Options{Watch: true}, "db", "db is an etcd snapshot, where nothing changes: get without `-w`"},
		{"read a snapshot", Options{}, "db", ""},
		{"two starts", Options{WatchOnly: true, ResourceVersion: "5", Revision: 4}, "", "`--resource-version` and `--revision` both say where a watch starts: give one"},
		{"events without a watch", Options{OutputWatchEvents: true}, "", "`--output-watch-events` needs `--watch` or `--watch-only`"},
		{"version with --watch", Options{Watch: true, ResourceVersion: "5"}, "", "`--resource-version` needs `--watch-only`: the list `--watch` prints first is the state now, not at that version"},
		{"version no revision", Options{WatchOnly: true, ResourceVersion: "x"}, "", "invalid `--resource-version` \"x\": want an etcd revision, e.g. 12345"},
		{"version", Options{WatchOnly: true, ResourceVersion: "12345"}, "", ""},
	} {
		err := tc.o.Validate(tc.snapshot)
		if got := errString(err); got != tc.want {
			t.Errorf("%s: Validate = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestNoResourcesNamesTheOneNamespace(t *testing.T) {
	shop := handle.Target{Namespace: "shop"}
	all := handle.Target{}
	for _, tc := range []struct {
		targets []handle.Target
		want    string
	}{
		{[]handle.Target{shop}, "No resources found in shop namespace."},
		{[]handle.Target{shop, shop}, "No resources found in shop namespace."},
		{[]handle.Target{shop, all}, "No resources found"},
		{[]handle.Target{all}, "No resources found"},
	} {
		if got := NoResources(tc.targets); got != tc.want {
			t.Errorf("NoResources(%v) = %q, want %q", tc.targets, got, tc.want)
		}
	}
}

func TestTrimHidesManagedFieldsUnlessAsked(t *testing.T) {
	pod := func() runtime.Object {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}}
	}
	if got := (&Options{}).trim(pod()).(*corev1.Pod); got.ManagedFields != nil {
		t.Errorf("managedFields kept: %v", got.ManagedFields)
	}
	if got := (&Options{ShowManagedFields: true}).trim(pod()).(*corev1.Pod); len(got.ManagedFields) != 1 {
		t.Errorf("managedFields dropped with ShowManagedFields")
	}
}

func TestListCutNamesWhatWasListedWhenCancelled(t *testing.T) {
	pods := handle.Target{Handle: &handle.Handle{Path: "pods"}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := listCut(ctx, pods, ctx.Err()).Error(); got != "listing pods: context canceled" {
		t.Errorf("cancelled: %q", got)
	}
	own := errors.New("etcdserver: request timed out")
	if got := listCut(ctx, pods, own); got != own {
		t.Errorf("another error became %v", got)
	}
}

// TestWithKindsCountsTablesWithRows: names are prefixed with their kind
// only when objects of more than one type were found, as kubectl does.
func TestWithKindsCountsTablesWithRows(t *testing.T) {
	flags := render.NewGetPrintFlags()
	table := func(rows int) *render.ObjectTable {
		tb := flags.NewTable(schema.GroupKind{Kind: "Pod"}, false, nil)
		tb.Append(&metav1.Table{Rows: make([]metav1.TableRow, rows)})
		return tb
	}
	for _, tc := range []struct {
		rows []int
		want bool
	}{
		{[]int{1}, false},
		{[]int{2, 0}, false},
		{[]int{1, 1}, true},
		{[]int{0, 3, 1}, true},
	} {
		var tables []*render.ObjectTable
		for _, n := range tc.rows {
			tables = append(tables, table(n))
		}
		withKinds(tables)
		for i, tb := range tables {
			if tb.WithKind != tc.want {
				t.Errorf("rows %v: table %d WithKind = %v, want %v", tc.rows, i, tb.WithKind, tc.want)
			}
		}
	}
}

// lines joins lines as a command prints them.
func lines(l ...string) string { return strings.Join(l, "\n") + "\n" }
