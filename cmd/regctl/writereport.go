package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/stores"
)

// writeReport says what became of each write of a command, as kubectl does:
// on stdout, each object written with what was done ("deployment.apps/web
// created"), or with -o the written objects instead; failures on stderr;
// and sums up in the command's error.
type writeReport struct {
	o       *writeOptions
	verb    string // created, replaced, deleted
	total   int
	printer *writtenPrinter
	// named puts where a failed object is in front of its error, for
	// manifests ("document 2 (pod/web)"); a delete's errors name the object.
	named bool

	done, failed, uncertain int
	// ignored are objects that were already gone, with --ignore-not-found.
	ignored int
	// operations are kubectl's name printers of each operation reported.
	operations map[string]printers.ResourcePrinter
	// line, when set, says what was done in place of the name printer
	// (kubectl's delete words its line itself).
	line func(name runtime.Object, what string) error
}

func newWriteReport(o *writeOptions, verb string, total int, named bool) *writeReport {
	return &writeReport{o: o, verb: verb, total: total, named: named, printer: newWrittenPrinter(o, total), operations: map[string]printers.ResourcePrinter{}}
}

// written reports one write that happened: obj as the store returned it
// (nil when it returned none, as for an object deleted unread), named by
// name, which carries its kind and group (obj itself, or what stands for it).
func (r *writeReport) written(obj, name runtime.Object, what string) error {
	r.done++
	if r.o.Output != "" {
		if r.o.Output == render.Name {
			obj = name
		}
		return r.printer.add(obj)
	}
	if r.line != nil {
		return r.line(name, what)
	}
	p, ok := r.operations[what]
	if !ok {
		// kubectl's create, replace and delete print the operation after
		// the name, with the dry run said after it.
		operation := what
		if r.o.DryRun {
			operation += " (dry run)"
		}
		var err error
		if p, err = render.NamePrinter(operation); err != nil {
			return err
		}
		r.operations[what] = p
	}
	if err := p.PrintObj(name, r.o.IO.Out); err != nil {
		return fmt.Errorf("printing what was %s: %w", what, err)
	}
	return nil
}

// fail reports a write that returned err: a definite failure, or a write
// cut short in flight that may have been applied, which is never reported
// as not written.
func (r *writeReport) fail(ctx context.Context, where string, err error) {
	if stores.OutcomeOf(ctx, err) == stores.Uncertain {
		r.uncertain++
		reason := err
		if ctx.Err() != nil {
			reason = context.Cause(ctx)
		}
		fmt.Fprintf(r.o.IO.ErrOut, "error: %s may have been written: %s\n", where, render.OneLine(reason))
		return
	}
	r.failed++
	if r.named {
		fmt.Fprintf(r.o.IO.ErrOut, "error: %s: %s\n", where, render.OneLine(err))
		return
	}
	fmt.Fprintf(r.o.IO.ErrOut, "error: %s\n", render.OneLine(err))
}

// refused counts n objects checked and refused after others were written,
// whose errors were said.
func (r *writeReport) refused(n int) { r.failed += n }

// finish ends the output and returns the command's error, if any: the
// failures, and when the context ended early, what may have been written
// and what was not attempted.
// ignore counts an object that was already gone, said nothing of, as
// kubectl's --ignore-not-found does.
func (r *writeReport) ignore() { r.ignored++ }

func (r *writeReport) finish(ctx context.Context) error {
	skipped := r.total - r.done - r.failed - r.uncertain - r.ignored
	if err := r.printer.finish(skipped == 0 && r.uncertain == 0); err != nil {
		return err
	}
	if r.failed+r.uncertain+skipped == 0 {
		return nil
	}
	if ctx.Err() == nil && r.uncertain == 0 && skipped == 0 {
		return fmt.Errorf("%d of %d objects were not %s", r.failed, r.total, r.verb)
	}
	parts := []string{fmt.Sprintf("%d %s", r.done, r.verb)}
	for _, c := range []struct {
		n    int
		what string
	}{{r.failed, "not " + r.verb}, {r.uncertain, "may have been written"}, {skipped, "not attempted"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	summary := strings.Join(parts, ", ")
	if ctx.Err() != nil {
		summary = "interrupted: " + summary
	}
	return errors.New(summary)
}

// writtenPrinter prints written objects with -o: one object as itself when
// the command writes one, otherwise a List (or names), streamed.
type writtenPrinter struct {
	o      *writeOptions
	single bool
	lw     *render.ListWriter
	n      int
}

func newWrittenPrinter(o *writeOptions, planned int) *writtenPrinter {
	p := &writtenPrinter{o: o, single: planned == 1 && o.Output != render.Name}
	if o.Output != "" && !p.single {
		p.lw = render.NewListWriter(o.IO.Out, o.Output)
	}
	return p
}

func (p *writtenPrinter) add(obj runtime.Object) error {
	if p.o.Output == "" || obj == nil {
		return nil
	}
	p.n++
	if p.single {
		return render.PrintObject(p.o.IO.Out, p.o.Output, obj)
	}
	return p.lw.Add(obj)
}

// finish closes the list, or, when some objects may be missing from it
// (writes cut short or never started), leaves it visibly cut.
func (p *writtenPrinter) finish(complete bool) error {
	if p.lw == nil || p.n == 0 {
		return nil
	}
	if !complete {
		return p.lw.Cut()
	}
	return p.lw.Close()
}
