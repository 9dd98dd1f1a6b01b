package stores

import (
	"context"
	goruntime "runtime"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/manifest"
)

// Writes run concurrently within a window of consecutive objects of the
// same kind: a manifest's order matters between kinds (a namespace before
// its pods) but not among the pods themselves, unless one names the same
// object twice, where the first must win. Each window is reported in
// document order before the next starts.
const (
	Writers     = 8
	writeWindow = 64
)

// Planned is one manifest object resolved to its target and checked by its
// store, ready to be written. The decoded object is not kept: a manifest of
// many objects would be held in memory twice.
type Planned struct {
	Source manifest.Object
	Target handle.Target
	// Validation is the field validation it is decoded with (Strict, Warn,
	// Ignore); Warnings are what Warn found.
	Validation string
	Warnings   []string
}

// Decode decodes the object again, for writing.
func (p Planned) Decode() (runtime.Object, error) {
	obj, _, err := DecodeValidating(p.Target, p.Source.JSON, p.validation())
	return obj, err
}

func (p Planned) validation() string {
	if p.Validation == "" {
		return metav1.FieldValidationStrict
	}
	return p.Validation
}

// Plan resolves, decodes and checks every object first, on every core, so
// that a stream with a bad document is refused whole before anything is
// written, with the field validation given (metav1.FieldValidation*, Strict
// when empty). Errors are manifest.Errors naming the document.
func Plan(ctx context.Context, objs []manifest.Object, validation string, resolve func(manifest.Object) (handle.Target, error), check func(context.Context, Planned, runtime.Object) error) ([]Planned, []error) {
	results := make([]Planned, len(objs))
	failures := make([]error, len(objs))
	parallel(len(objs), func(i int) {
		o := objs[i]
		if results[i], failures[i] = planOne(ctx, o, validation, resolve, check); failures[i] != nil {
			failures[i] = &manifest.Error{File: o.File, FileIndex: o.FileIndex, Doc: o.Doc, Item: o.Item, Err: failures[i]}
		}
	})
	var out []Planned
	var errs []error
	for i := range objs {
		if failures[i] != nil {
			errs = append(errs, failures[i])
			continue
		}
		out = append(out, results[i])
	}
	return out, errs
}

func planOne(ctx context.Context, o manifest.Object, validation string, resolve func(manifest.Object) (handle.Target, error), check func(context.Context, Planned, runtime.Object) error) (Planned, error) {
	t, err := resolve(o)
	if err != nil {
		return Planned{}, err
	}
	p := Planned{Source: o, Target: t, Validation: validation}
	obj, warnings, err := DecodeValidating(t, o.JSON, p.validation())
	p.Warnings = warnings
	if err != nil {
		return Planned{}, err
	}
	if err := check(ctx, p, obj); err != nil {
		return Planned{}, err
	}
	return p, nil
}

// parallel runs fn for every one of 0..n-1 on every core, and at least
// Writers at a time.
func parallel(n int, fn func(i int)) {
	workqueue.ParallelizeUntil(context.Background(), max(goruntime.GOMAXPROCS(0), Writers), n, fn)
}

// Written is what became of one write of a batch.
type Written struct {
	Object runtime.Object
	Err    error
	// Started is false for a write never started: the context was done.
	Started bool
}

// WriteAll writes the planned objects window by window, Writers at a time,
// and hands each outcome to report in document order. Once the context is
// done no new write starts; report still hears of every object of the
// window, started or not. An error of report stops the batch.
func WriteAll(ctx context.Context, objs []Planned, write func(context.Context, Planned) (runtime.Object, error), report func(Planned, Written) error) error {
	for start := 0; start < len(objs) && ctx.Err() == nil; {
		end := windowEnd(objs, start)
		results := writeWindowOf(ctx, objs[start:end], write)
		for i, p := range objs[start:end] {
			if err := report(p, results[i]); err != nil {
				return err
			}
		}
		start = end
	}
	return nil
}

// writeWindowOf writes a window of objects, Writers at a time, and starts
// no write once the context is done.
func writeWindowOf(ctx context.Context, window []Planned, write func(context.Context, Planned) (runtime.Object, error)) []Written {
	results := make([]Written, len(window))
	workqueue.ParallelizeUntil(ctx, Writers, len(window), func(i int) {
		if ctx.Err() != nil {
			return
		}
		results[i].Started = true
		results[i].Object, results[i].Err = write(ctx, window[i])
	})
	return results
}

// windowEnd is the end of the window of objects that starts at start.
func windowEnd(objs []Planned, start int) int {
	seen := map[string]bool{}
	end := start
	for ; end < len(objs) && end-start < writeWindow && objs[end].Source.GVK == objs[start].Source.GVK; end++ {
		if name := objs[end].Source.Name; name != "" {
			key := objs[end].Target.Namespace + "/" + name
			if seen[key] {
				break
			}
			seen[key] = true
		}
	}
	return end
}
