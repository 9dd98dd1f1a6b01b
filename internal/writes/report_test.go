package writes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/manifest"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/stores"
)

var configMapKind = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

// configMap is a config map as a store returns it: with its kind.
func configMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"}}
}

// newTestReport is a report of total writes, on buffers.
func newTestReport(output render.Format, dryRun bool, total int) (*Report, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	rep := NewReport(ReportOptions{Out: &out, ErrOut: &errOut, Output: output, DryRun: dryRun, Verb: "created", Total: total, Named: true})
	return rep, &out, &errOut
}

func written(t *testing.T, rep *Report, names ...string) {
	t.Helper()
	for _, name := range names {
		if err := rep.Written(configMap(name), configMap(name), "created"); err != nil {
			t.Fatal(err)
		}
	}
}

// The summary is the command's error: nothing when all were written, the
// count of failures, or, with writes not attempted or in doubt, each count.
func TestReportSumsUpTheWrites(t *testing.T) {
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	refusal := apierrors.NewAlreadyExists(schema.GroupResource{Resource: "configmaps"}, "b")
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		total   int
		failed  int
		ignored int
		want    string
	}{
		{name: "all written", ctx: ctx, total: 2},
		{name: "one refused", ctx: ctx, total: 3, failed: 1, want: "1 of 3 objects were not created"},
		{name: "one already gone", ctx: ctx, total: 3, ignored: 1},
		{name: "not attempted", ctx: ctx, total: 4, failed: 1, want: "2 created, 1 not created, 1 not attempted"},
		{name: "interrupted", ctx: cancelled, total: 5, want: "interrupted: 2 created, 3 not attempted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, _, _ := newTestReport("", false, tc.total)
			written(t, rep, "a", "c")
			for range tc.failed {
				rep.Fail(tc.ctx, "document 2 (configmap/b)", refusal)
			}
			for range tc.ignored {
				rep.Ignore()
			}
			err := rep.Finish(tc.ctx)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Finish: %v, want nil", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Errorf("Finish: %v, want %q", err, tc.want)
			}
		})
	}
}

// Each write is a line of kubectl's name printer, the dry run said after
// the operation; a failure is a line on stderr, named where it is in the
// manifest, or by its own error for a delete's.
func TestReportLines(t *testing.T) {
	ctx := context.Background()
	rep, out, errOut := newTestReport("", true, 2)
	written(t, rep, "a")
	rep.Fail(ctx, "document 2 (configmap/b)", errors.New("bad\n  value"))
	if want := "configmap/a created (dry run)\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
	if want := "error: document 2 (configmap/b): bad value\n"; errOut.String() != want {
		t.Errorf("stderr %q, want %q: named, on one line", errOut.String(), want)
	}

	var unnamed bytes.Buffer
	rep = NewReport(ReportOptions{Out: out, ErrOut: &unnamed, Verb: "deleted", Total: 1})
	rep.Fail(ctx, "configmap/b", apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "b"))
	if want := "error: configmaps \"b\" not found\n"; unnamed.String() != want {
		t.Errorf("stderr %q, want %q", unnamed.String(), want)
	}

	// Line words the line in place of the name printer.
	var lines []string
	rep, out, _ = newTestReport("", false, 1)
	rep.Line = func(name runtime.Object, what string) error {
		lines = append(lines, what)
		return nil
	}
	written(t, rep, "a")
	if out.Len() != 0 || len(lines) != 1 || lines[0] != "created" {
		t.Errorf("stdout %q, lines %q: want Line called alone", out.String(), lines)
	}
}

// A write cut short in flight may have been applied: it is said so, with
// the interrupt as its reason, and never counted as not written.
func TestReportUncertainOutcome(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupted"))
	rep, _, errOut := newTestReport("", false, 2)
	written(t, rep, "a")
	rep.Fail(ctx, "document 2 (configmap/b)", context.Canceled)
	if want := "error: document 2 (configmap/b) may have been written: interrupted\n"; errOut.String() != want {
		t.Errorf("stderr %q, want %q", errOut.String(), want)
	}
	if err := rep.Finish(ctx); err == nil || err.Error() != "interrupted: 1 created, 1 may have been written" {
		t.Errorf("Finish: %v, want the uncertain write counted", err)
	}
}

// With -o one object is printed as itself; several as a List, closed when
// every one was written and visibly cut otherwise.
func TestReportPrintsTheWrittenObjects(t *testing.T) {
	ctx := context.Background()
	rep, out, _ := newTestReport(render.JSON, false, 1)
	written(t, rep, "a")
	if err := rep.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	var one corev1.ConfigMap
	if err := json.Unmarshal(out.Bytes(), &one); err != nil || one.Kind != "ConfigMap" || one.Name != "a" {
		t.Errorf("stdout %q (%v): want config map a as itself", out.String(), err)
	}

	rep, out, _ = newTestReport(render.JSON, false, 2)
	written(t, rep, "a", "b")
	if err := rep.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	var list corev1.ConfigMapList
	if err := json.Unmarshal(out.Bytes(), &list); err != nil || list.Kind != "List" || len(list.Items) != 2 {
		t.Errorf("stdout %q (%v): want a List of both", out.String(), err)
	}

	rep, out, _ = newTestReport(render.YAML, false, 3)
	written(t, rep, "a", "b")
	if err := rep.Finish(ctx); err == nil || err.Error() != "2 created, 1 not attempted" {
		t.Errorf("Finish: %v, want one not attempted", err)
	}
	if s := out.String(); !strings.HasSuffix(s, "@incomplete: reading stopped before the end of the list; see the error on stderr\n") || strings.Contains(s, "kind: List") {
		t.Errorf("stdout %q: want the list cut, not closed", s)
	}

	// -o name prints a name per object, even for one, with no list.
	rep, out, _ = newTestReport(render.Name, false, 1)
	if err := rep.Written(nil, render.NameOnly(configMapKind, "shop", "a"), "created"); err != nil {
		t.Fatal(err)
	}
	if err := rep.Finish(ctx); err != nil || out.String() != "configmap/a\n" {
		t.Errorf("stdout %q, Finish %v: want the name alone", out.String(), err)
	}
}

// TestWritesInFlightWhenInterruptedMayHaveBeenWritten interrupts a window
// of writes while some are in flight: those are reported as possibly
// written, an API error as a failure, the rest are never started.
func TestWritesInFlightWhenInterruptedMayHaveBeenWritten(t *testing.T) {
	const n = 20
	objs := make([]stores.Planned, n)
	for i := range objs {
		objs[i] = stores.Planned{
			Source: manifest.Object{Doc: i + 1, GVK: configMapKind, Name: fmt.Sprintf("cm-%02d", i)},
			Target: handle.Target{Handle: &handle.Handle{Path: "configmaps"}, Namespace: "shop"},
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	release := make(chan struct{})
	var started sync.WaitGroup
	started.Add(stores.Writers)
	go func() {
		// Every writer busy: the interrupt comes, then the first four finish.
		started.Wait()
		cancel()
		close(release)
	}()
	var calls sync.Map
	var n0 atomic.Int32
	write := func(ctx context.Context, p stores.Planned) (runtime.Object, error) {
		calls.Store(p.Source.Name, true)
		if n0.Add(1) <= stores.Writers {
			started.Done()
		}
		i := p.Source.Doc - 1
		switch {
		case i < 4:
			<-release
			return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: p.Source.Name}}, nil
		case i == 4:
			<-ctx.Done()
			return nil, apierrors.NewAlreadyExists(schema.GroupResource{Resource: "configmaps"}, p.Source.Name)
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	rep, out, errOut := newTestReport("", false, n)
	if err := reportEach(ctx, rep, objs, write); err != nil {
		t.Fatal(err)
	}
	err := rep.Finish(ctx)
	stderr := errOut.String()
	if err == nil || err.Error() != "interrupted: 4 created, 1 not created, 3 may have been written, 12 not attempted" {
		t.Errorf("error %v: want the interrupted summary", err)
	}
	if want := "configmap/cm-00 created\nconfigmap/cm-01 created\nconfigmap/cm-02 created\nconfigmap/cm-03 created\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
	for _, want := range []string{
		`error: document 5 (configmap/cm-04): configmaps "cm-04" already exists`,
		"error: document 6 (configmap/cm-05) may have been written: context canceled",
		"error: document 8 (configmap/cm-07) may have been written: context canceled",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q: want %q", stderr, want)
		}
	}
	if strings.Contains(stderr, "cm-08") {
		t.Errorf("stderr %q: an object never started is reported", stderr)
	}
	for i := stores.Writers; i < n; i++ {
		if _, ok := calls.Load(fmt.Sprintf("cm-%02d", i)); ok {
			t.Errorf("cm-%02d was written after the interrupt", i)
		}
	}
}

// A failed object is named as kubectl's name printer names it, group
// included; a written one by what the store returned, or by the manifest
// when the store returned nothing.
func TestWrittenAndPlannedNames(t *testing.T) {
	p := stores.Planned{Source: manifest.Object{GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Name: "web", Namespace: "shop"}}
	if got := plannedName(p); got != "deployment.apps/web" {
		t.Errorf("plannedName = %q, want deployment.apps/web", got)
	}
	generated := configMap("web-x7k2")
	if got := writtenName(p, generated); got != runtime.Object(generated) {
		t.Errorf("writtenName = %v, want the object the store returned", got)
	}
	got, err := runtime.DefaultUnstructuredConverter.ToUnstructured(writtenName(p, nil))
	if err != nil || got["kind"] != "Deployment" || got["metadata"].(map[string]any)["name"] != "web" {
		t.Errorf("writtenName(nil) = %v (%v), want the manifest's kind and name", got, err)
	}
}

func TestVerbsTakeWhatGetPrints(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", ResourceVersion: "42"}}
	if asNew(cm); cm.ResourceVersion != "" {
		t.Errorf("a create keeps resourceVersion %q, which the store refuses", cm.ResourceVersion)
	}
	if err := hasVersion(cm, false); err != errNoVersion {
		t.Errorf("a replace without a resourceVersion: %v, want %v", err, errNoVersion)
	}
	if err := hasVersion(cm, true); err != nil {
		t.Errorf("a replace with --force: %v", err)
	}
	cm.ResourceVersion = "42"
	if err := hasVersion(cm, false); err != nil {
		t.Errorf("a replace with a resourceVersion: %v", err)
	}
}
