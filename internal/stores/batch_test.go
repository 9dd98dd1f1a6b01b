package stores

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/manifest"
)

var (
	configMapKind = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	secretKind    = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	namespaceKind = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
)

// TestPlanReportsEveryBadObjectInDocumentOrderWithTheValidationAsked: a
// manifest of good and bad objects is checked whole, on a real store; each
// bad object (one with an unknown field when validation is strict, one of
// a kind that does not resolve, one the check refuses, one the store's
// validation refuses, one that does not decode) is an error naming its
// document, in document order even when the checks finish in another, and
// only the good ones are planned, in order, with what Warn found.
func TestPlanReportsEveryBadObjectInDocumentOrderWithTheValidationAsked(t *testing.T) {
	s := newRealConfigMaps(t)
	doc := func(n int, kind, name, extra string) manifest.Object {
		gvk := configMapKind
		gvk.Kind = kind
		return manifest.Object{
			File: "m.yaml", Doc: n, GVK: gvk, Name: name, Namespace: "default",
			JSON: []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":%q,"metadata":{"name":%q}%s}`, kind, name, extra)),
		}
	}
	objs := []manifest.Object{
		doc(1, "ConfigMap", "good", `,"data":{"k":"v"}`),
		doc(2, "ConfigMap", "unknown-field", `,"bogus":1`),
		doc(3, "Widget", "unresolved", ""),
		doc(4, "ConfigMap", "refused", ""),
		doc(5, "ConfigMap", "invalid", `,"data":{"not a key!":"v"}`),
		doc(6, "ConfigMap", "undecodable", `,"data":"text"`),
		doc(7, "ConfigMap", "last", ""),
	}
	errUnresolved := errors.New("no such kind")
	errRefused := errors.New("refused by the check")

	for _, tc := range []struct {
		validation string
		// planned are the names planned; failed the documents refused.
		planned  []string
		failed   []int
		warnings map[string][]string
	}{
		// Strict is what an empty validation means.
		{"", []string{"good", "last"}, []int{2, 3, 4, 5, 6}, nil},
		{metav1.FieldValidationStrict, []string{"good", "last"}, []int{2, 3, 4, 5, 6}, nil},
		{metav1.FieldValidationWarn, []string{"good", "unknown-field", "last"}, []int{3, 4, 5, 6}, map[string][]string{"unknown-field": {`unknown field "bogus"`}}},
		{metav1.FieldValidationIgnore, []string{"good", "unknown-field", "last"}, []int{3, 4, 5, 6}, nil},
	} {
		t.Run("validation "+tc.validation, func(t *testing.T) {
			// The unresolved kind fails only once the check of a later
			// document has failed: errors must come out in document
			// order, not in the order they were found.
			refusedChecked := make(chan struct{})
			resolve := func(o manifest.Object) (handle.Target, error) {
				if o.GVK.Kind != "ConfigMap" {
					select {
					case <-refusedChecked:
					// Only against a Plan that checks one object at a
					// time, which would wait here for ever.
					case <-time.After(10 * time.Second):
						t.Error("the objects were not checked side by side")
					}
					return handle.Target{}, errUnresolved
				}
				return s.target, nil
			}
			var checkedMu sync.Mutex
			checked := map[string]bool{}
			check := func(ctx context.Context, p Planned, obj runtime.Object) error {
				cm, ok := obj.(*api.ConfigMap)
				if !ok || cm.Name != p.Source.Name {
					return fmt.Errorf("checked %#v for %s", obj, p.Source.Name)
				}
				checkedMu.Lock()
				checked[cm.Name] = true
				checkedMu.Unlock()
				if cm.Name == "refused" {
					close(refusedChecked)
					return errRefused
				}
				return ValidateCreate(ctx, p.Target, obj)
			}

			planned, errs := Plan(context.Background(), objs, tc.validation, resolve, check)

			var gotNames []string
			gotWarnings := map[string][]string{}
			for _, p := range planned {
				gotNames = append(gotNames, p.Source.Name)
				if p.Validation != tc.validation || p.Target.Handle != s.target.Handle {
					t.Errorf("%s planned with validation %q on %v, want %q on configmaps", p.Source.Name, p.Validation, p.Target.Handle, tc.validation)
				}
				for _, w := range p.Warnings {
					gotWarnings[p.Source.Name] = append(gotWarnings[p.Source.Name], w)
				}
				// Each is written decoded again, with the same validation:
				// what Warn let through must decode for the write.
				if obj, err := p.Decode(); err != nil || obj.(*api.ConfigMap).Name != p.Source.Name {
					t.Errorf("decoding %s again for the write: %v, %v", p.Source.Name, obj, err)
				}
			}
			if !reflect.DeepEqual(gotNames, tc.planned) {
				t.Errorf("planned %q, want %q", gotNames, tc.planned)
			}
			if len(tc.warnings) == 0 {
				tc.warnings = map[string][]string{}
			}
			if !reflect.DeepEqual(gotWarnings, tc.warnings) {
				t.Errorf("warnings %q, want %q", gotWarnings, tc.warnings)
			}

			var gotDocs []int
			for _, err := range errs {
				var me *manifest.Error
				if !errors.As(err, &me) || me.File != "m.yaml" {
					t.Errorf("%v is not a manifest.Error of m.yaml", err)
					continue
				}
				gotDocs = append(gotDocs, me.Doc)
				// Each error is the one of its object.
				switch me.Doc {
				case 2:
					if !apierrors.IsBadRequest(me.Err) || !strings.Contains(me.Err.Error(), `unknown field "bogus"`) {
						t.Errorf("document 2: %v, want the strict decoding error of bogus", me.Err)
					}
				case 3:
					if !errors.Is(me.Err, errUnresolved) {
						t.Errorf("document 3: %v, want the error of resolve", me.Err)
					}
				case 4:
					if !errors.Is(me.Err, errRefused) {
						t.Errorf("document 4: %v, want the error of the check", me.Err)
					}
				case 5:
					if !apierrors.IsInvalid(me.Err) || !strings.Contains(me.Err.Error(), "not a key!") {
						t.Errorf("document 5: %v, want the store's Invalid error of the data key", me.Err)
					}
				case 6:
					var fe *manifest.FieldTypeError
					if !errors.As(me.Err, &fe) || fe.Path != "data" {
						t.Errorf("document 6: %v, want data: expected an object", me.Err)
					}
				}
				if !strings.HasPrefix(err.Error(), fmt.Sprintf("m.yaml, document %d: ", me.Doc)) {
					t.Errorf("%q does not name its document", err)
				}
			}
			if !reflect.DeepEqual(gotDocs, tc.failed) {
				t.Errorf("errors of documents %v, want %v", gotDocs, tc.failed)
			}
			// What does not decode is never checked.
			if checked["undecodable"] || checked["unresolved"] {
				t.Errorf("checked %v: an object that does not resolve or decode was checked", checked)
			}
		})
	}
}

// planned is a planned object of kind gvk named name in namespace, enough
// for windowEnd and WriteAll, which look at nothing else.
func planned(gvk schema.GroupVersionKind, namespace, name string) Planned {
	return Planned{Source: manifest.Object{GVK: gvk, Name: name, Namespace: namespace}, Target: handle.Target{Namespace: namespace}}
}

func configMaps(namespace string, n int) []Planned {
	var out []Planned
	for i := range n {
		out = append(out, planned(configMapKind, namespace, fmt.Sprintf("cm-%03d", i)))
	}
	return out
}

// windows cuts objs into windows with windowEnd, as WriteAll does, and
// returns their lengths.
func windows(objs []Planned) []int {
	var out []int
	for start := 0; start < len(objs); {
		end := windowEnd(objs, start)
		if end <= start {
			// A window that does not move on would never end.
			return append(out, end-start)
		}
		out = append(out, end-start)
		start = end
	}
	return out
}

// TestWindowsEndBeforeAnObjectThatDependsOnAnEarlierOne: objects written
// side by side must not depend on one another, so a window ends where the
// kind changes (a namespace, then what is in it) and before the same object
// is named twice (the first must be written first); independent objects
// fill windows of writeWindow.
func TestWindowsEndBeforeAnObjectThatDependsOnAnEarlierOne(t *testing.T) {
	cat := func(parts ...[]Planned) []Planned {
		var out []Planned
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	one := func(gvk schema.GroupVersionKind, namespace, name string) []Planned {
		return []Planned{planned(gvk, namespace, name)}
	}
	for _, tc := range []struct {
		name string
		objs []Planned
		want []int
	}{
		{"nothing", nil, nil},
		{"one object", configMaps("ns", 1), []int{1}},
		{"independent objects, in full windows", configMaps("ns", 2*writeWindow+5), []int{writeWindow, writeWindow, 5}},
		{"a namespace, then objects in it", cat(one(namespaceKind, "", "ns"), configMaps("ns", 3)), []int{1, 3}},
		{"kinds in turn", cat(configMaps("ns", 2), one(secretKind, "ns", "s"), configMaps("ns", 2)), []int{2, 1, 2}},
		{"the same object twice", cat(configMaps("ns", 3), configMaps("ns", 2)), []int{3, 2}},
		{"the same object twice in a row", cat(configMaps("ns", 1), configMaps("ns", 1), configMaps("ns", 1)), []int{1, 1, 1}},
		{"the same name in other namespaces", cat(configMaps("a", 2), configMaps("b", 2)), []int{4}},
		{"generated names, which never collide", cat(one(configMapKind, "ns", ""), one(configMapKind, "ns", ""), one(configMapKind, "ns", "")), []int{3}},
	} {
		if got := windows(tc.objs); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: windows of %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The tests of WriteAll's concurrency run in a synctest bubble:
// synctest.Wait returns once every write started is blocked, so what has
// started, and what has not, is known without timing.

// TestWriteAllReportsInDocumentOrderWhenWritesFinishInAnother: the writes
// of a window run side by side and finish in reverse order; each outcome
// is still reported in document order, with its own object and error.
func TestWriteAllReportsInDocumentOrderWhenWritesFinishInAnother(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		objs := configMaps("ns", 5)
		index := map[string]int{}
		release := make([]chan struct{}, len(objs))
		for i, p := range objs {
			index[p.Source.Name] = i
			release[i] = make(chan struct{})
		}
		var mu sync.Mutex
		var started, finished []int
		errOdd := errors.New("odd")
		write := func(ctx context.Context, p Planned) (runtime.Object, error) {
			i := index[p.Source.Name]
			mu.Lock()
			started = append(started, i)
			mu.Unlock()
			<-release[i]
			mu.Lock()
			finished = append(finished, i)
			mu.Unlock()
			if i%2 == 1 {
				return nil, fmt.Errorf("writing %d: %w", i, errOdd)
			}
			return &api.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: p.Source.Name}}, nil
		}
		var reported []string
		report := func(p Planned, w Written) error {
			i := index[p.Source.Name]
			switch {
			case !w.Started:
				t.Errorf("%d reported not started", i)
			case i%2 == 1 && !errors.Is(w.Err, errOdd):
				t.Errorf("%d reported %v, want its error", i, w.Err)
			case i%2 == 0 && (w.Err != nil || w.Object.(*api.ConfigMap).Name != p.Source.Name):
				t.Errorf("%d reported %v, %v, want its object", i, w.Object, w.Err)
			}
			reported = append(reported, p.Source.Name)
			return nil
		}
		done := make(chan error)
		go func() { done <- WriteAll(context.Background(), objs, write, report) }()
		synctest.Wait()
		// Every write of the window started before any finished: they
		// run side by side.
		if len(started) != len(objs) {
			t.Fatalf("%d writes started side by side, want %d", len(started), len(objs))
		}
		for i := len(objs) - 1; i >= 0; i-- {
			close(release[i])
			synctest.Wait()
			// Nothing is reported while a write of the window runs.
			if i > 0 && len(reported) != 0 {
				t.Errorf("%q reported before the window was written", reported)
			}
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if want := []int{4, 3, 2, 1, 0}; !slices.Equal(finished, want) {
			t.Fatalf("writes finished in the order %v, want %v", finished, want)
		}
		var want []string
		for _, p := range objs {
			want = append(want, p.Source.Name)
		}
		if !slices.Equal(reported, want) {
			t.Errorf("reported %q, want %q", reported, want)
		}
	})
}

// TestWriteAllWritesWritersAtATime: a long window is written Writers at a
// time: whenever a write ends the next starts, and never more than Writers
// run; every object is written once.
func TestWriteAllWritesWritersAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		objs := configMaps("ns", 3*Writers+2)
		var running atomic.Int32
		var mu sync.Mutex
		writes := map[string]int{}
		// Each value sent ends one write.
		release := make(chan struct{})
		write := func(ctx context.Context, p Planned) (runtime.Object, error) {
			running.Add(1)
			defer running.Add(-1)
			mu.Lock()
			writes[p.Source.Name]++
			mu.Unlock()
			<-release
			return nil, nil
		}
		done := make(chan error)
		go func() {
			done <- WriteAll(context.Background(), objs, write, func(Planned, Written) error { return nil })
		}()
		for left := len(objs); left > 0; left-- {
			synctest.Wait()
			if n := running.Load(); int(n) != min(Writers, left) {
				t.Fatalf("%d objects left to write: %d writes running, want %d", left, n, min(Writers, left))
			}
			release <- struct{}{}
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		for _, p := range objs {
			if writes[p.Source.Name] != 1 {
				t.Errorf("%s written %d times", p.Source.Name, writes[p.Source.Name])
			}
		}
	})
}

// TestWriteAllWritesWhatDependsOnAnObjectOnceItIsReported: the objects in
// a namespace, and a second write of the same object, are written only
// once the write they depend on has finished and been reported.
func TestWriteAllWritesWhatDependsOnAnObjectOnceItIsReported(t *testing.T) {
	objs := append([]Planned{planned(namespaceKind, "", "ns")}, configMaps("ns", 3)...)
	objs = append(objs, configMaps("ns", 1)...) // cm-000 again
	var mu sync.Mutex
	var reported, log []string
	write := func(ctx context.Context, p Planned) (runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		name := p.Source.GVK.Kind + " " + p.Source.Name
		// Reports come only after the whole window is written: a
		// dependent object written beside what it depends on would find
		// it unreported.
		switch {
		case p.Source.GVK == configMapKind && !slices.Contains(reported, "Namespace ns"):
			t.Errorf("%s written before its namespace was reported (reported %q)", name, reported)
		case p.Source.Name == "cm-000" && slices.Contains(log, name) && len(reported) < 4:
			t.Errorf("%s written again before its first write was reported (reported %q)", name, reported)
		}
		log = append(log, name)
		return nil, nil
	}
	report := func(p Planned, w Written) error {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, p.Source.GVK.Kind+" "+p.Source.Name)
		return nil
	}
	if err := WriteAll(context.Background(), objs, write, report); err != nil {
		t.Fatal(err)
	}
	want := []string{"Namespace ns", "ConfigMap cm-000", "ConfigMap cm-001", "ConfigMap cm-002", "ConfigMap cm-000"}
	if !reflect.DeepEqual(reported, want) {
		t.Errorf("reported %q, want %q", reported, want)
	}
}

// TestWriteAllStartsNoWriteOnceTheContextIsDone: cancelled while its first
// Writers writes run, WriteAll starts no other; the window's objects are
// all reported, those never written as not Started, and the later windows
// not at all.
func TestWriteAllStartsNoWriteOnceTheContextIsDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		objs := append(configMaps("ns", 2*Writers), planned(secretKind, "ns", "later"))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var started atomic.Int32
		release := make(chan struct{})
		write := func(ctx context.Context, p Planned) (runtime.Object, error) {
			started.Add(1)
			<-release
			return &api.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: p.Source.Name}}, nil
		}
		var reported []Written
		report := func(p Planned, w Written) error {
			if p.Source.GVK != configMapKind {
				t.Errorf("%s of a later window reported", p.Source.Name)
			}
			reported = append(reported, w)
			return nil
		}
		done := make(chan error)
		go func() { done <- WriteAll(ctx, objs, write, report) }()
		// Writers writes run, and the next waits for one of them to end.
		synctest.Wait()
		if n := started.Load(); n != Writers {
			t.Fatalf("%d writes started, want %d", n, Writers)
		}
		cancel()
		synctest.Wait()
		if n := started.Load(); n != Writers {
			t.Errorf("%d writes started after the cancel", n-Writers)
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if n := started.Load(); n != Writers {
			t.Errorf("%d writes started once the first ended", n-Writers)
		}
		if len(reported) != 2*Writers {
			t.Fatalf("%d reported, want the %d of the window", len(reported), 2*Writers)
		}
		for i, w := range reported {
			if want := i < Writers; w.Started != want {
				t.Errorf("object %d: Started %v, want %v", i, w.Started, want)
			}
			if w.Started && w.Object == nil {
				t.Errorf("object %d: written, but reported without its object", i)
			}
			if !w.Started && (w.Object != nil || w.Err != nil) {
				t.Errorf("object %d: not started, but reported %v, %v", i, w.Object, w.Err)
			}
		}
	})
}

// TestWriteAllStopsAtAnErrorOfReport: an error of report ends the batch
// with it; nothing after is reported or written.
func TestWriteAllStopsAtAnErrorOfReport(t *testing.T) {
	// Two windows: the second (the same names again) is not written.
	objs := append(configMaps("ns", 3), configMaps("ns", 3)...)
	stop := errors.New("stop")
	var writes atomic.Int32
	var reported []string
	err := WriteAll(context.Background(), objs,
		func(context.Context, Planned) (runtime.Object, error) { writes.Add(1); return nil, nil },
		func(p Planned, w Written) error {
			reported = append(reported, p.Source.Name)
			if p.Source.Name == "cm-001" {
				return stop
			}
			return nil
		})
	if !errors.Is(err, stop) {
		t.Errorf("WriteAll: %v, want the error of report", err)
	}
	if want := []string{"cm-000", "cm-001"}; !reflect.DeepEqual(reported, want) {
		t.Errorf("reported %q, want %q", reported, want)
	}
	if writes.Load() != 3 {
		t.Errorf("%d written, want the 3 of the first window", writes.Load())
	}
}
