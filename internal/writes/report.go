package writes

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/stores"
)

// ReportOptions are what a Report says and where.
type ReportOptions struct {
	// Out gets a line per write, or with Output the objects written;
	// ErrOut the failures.
	Out, ErrOut io.Writer
	Output      render.Format // empty: a line per write
	// DryRun says "(dry run)" after each line.
	DryRun bool
	// Verb is what a write does, in the summary: created, replaced,
	// deleted.
	Verb string
	// Total is how many objects the command writes: those never reported
	// are summed up as not attempted.
	Total int
	// Named puts where a failed object is in front of its error, for
	// manifests ("document 2 (pod/web)"); a delete's errors name the
	// object themselves.
	Named bool
}

// Report says what became of each write of a command, as kubectl does:
// on stdout, each object written with what was done ("deployment.apps/web
// created"), or with -o the written objects instead; failures on stderr;
// and sums up in the command's error.
type Report struct {
	o       ReportOptions
	printer *writtenPrinter

	done, failed, uncertain int
	// ignored are objects that were already gone, with --ignore-not-found.
	ignored int
	// noSpace is etcd's refusal of a write for want of space, said once
	// when the report ends: every write after it would fail alike.
	noSpace error
	// operations are kubectl's name printers of each operation reported.
	operations map[string]printers.ResourcePrinter

	// Line, when set, says what was done in place of the name printer
	// (kubectl's delete words its line itself).
	Line func(name runtime.Object, what string) error
}

// NewReport starts the report of a command's writes.
func NewReport(o ReportOptions) *Report {
	return &Report{o: o, printer: newWrittenPrinter(o.Out, o.Output, o.Total), operations: map[string]printers.ResourcePrinter{}}
}

// Written reports one write that happened: obj as the store returned it
// (nil when it returned none, as for an object deleted unread), named by
// name, which carries its kind and group (obj itself, or what stands for it).
func (r *Report) Written(obj, name runtime.Object, what string) error {
	r.done++
	if r.o.Output != "" {
		if r.o.Output == render.Name {
			obj = name
		}
		return r.printer.add(obj)
	}
	if r.Line != nil {
		return r.Line(name, what)
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
	if err := p.PrintObj(name, r.o.Out); err != nil {
		return fmt.Errorf("printing what was %s: %w", what, err)
	}
	return nil
}

// Fail reports a write that returned err: a definite failure, or a write
// cut short in flight that may have been applied, which is never reported
// as not written.
func (r *Report) Fail(ctx context.Context, where string, err error) {
	if stores.OutcomeOf(ctx, err) == stores.Uncertain {
		r.uncertain++
		reason := err
		if ctx.Err() != nil {
			reason = context.Cause(ctx)
		}
		fmt.Fprintf(r.o.ErrOut, "error: %s may have been written: %s\n", where, render.OneLine(reason))
		return
	}
	r.failed++
	if etcdview.NoSpace(err) {
		r.noSpace = cmp.Or(r.noSpace, err)
		return
	}
	if r.o.Named {
		fmt.Fprintf(r.o.ErrOut, "error: %s: %s\n", where, render.OneLine(err))
		return
	}
	fmt.Fprintf(r.o.ErrOut, "error: %s\n", render.OneLine(err))
}

// refused counts n objects checked and refused after others were written,
// whose errors were said.
func (r *Report) refused(n int) { r.failed += n }

// Ignore counts an object that was already gone, said nothing of, as
// kubectl's --ignore-not-found does.
func (r *Report) Ignore() { r.ignored++ }

// Finish ends the output and returns the command's error, if any: the
// failures, and when the context ended early, what may have been written
// and what was not attempted.
func (r *Report) Finish(ctx context.Context) error {
	skipped := r.o.Total - r.done - r.failed - r.uncertain - r.ignored
	if err := r.printer.finish(skipped == 0 && r.uncertain == 0); err != nil {
		return err
	}
	if r.failed+r.uncertain+skipped == 0 {
		return nil
	}
	if r.noSpace != nil {
		return fmt.Errorf("%d of %d objects were not %s: %w", r.o.Total-r.done, r.o.Total, r.o.Verb, &etcdview.SpaceError{Err: r.noSpace})
	}
	if ctx.Err() == nil && r.uncertain == 0 && skipped == 0 {
		return fmt.Errorf("%d of %d objects were not %s", r.failed, r.o.Total, r.o.Verb)
	}
	parts := []string{fmt.Sprintf("%d %s", r.done, r.o.Verb)}
	for _, c := range []struct {
		n    int
		what string
	}{{r.failed, "not " + r.o.Verb}, {r.uncertain, "may have been written"}, {skipped, "not attempted"}} {
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
	out    io.Writer
	output render.Format
	single bool
	lw     *render.ListWriter
	n      int
}

func newWrittenPrinter(out io.Writer, output render.Format, planned int) *writtenPrinter {
	p := &writtenPrinter{out: out, output: output, single: planned == 1 && output != render.Name}
	if output != "" && !p.single {
		p.lw = render.NewListWriter(out, output)
	}
	return p
}

func (p *writtenPrinter) add(obj runtime.Object) error {
	if p.output == "" || obj == nil {
		return nil
	}
	p.n++
	if p.single {
		return render.PrintObject(p.out, p.output, obj)
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

// reportEach runs write on every planned object, saying on rep what became
// of each in document order (written on stdout, failed on stderr), or
// printing the results with -o as they come. A failure does not stop the
// others. Once the context is done no new write starts. The caller
// finishes rep: one command's writes done in steps are summed up once.
func reportEach(ctx context.Context, rep *Report, objs []stores.Planned, write func(context.Context, stores.Planned) (runtime.Object, error)) error {
	// Once etcd says it has no space, it refuses every write after alike:
	// no window of writes starts after the one that heard it.
	writing, stop := context.WithCancel(ctx)
	defer stop()
	return stores.WriteAll(writing, objs, write, func(p stores.Planned, w stores.Written) error {
		switch {
		case !w.Started:
			// Summed up as not attempted.
			return nil
		case w.Err != nil:
			rep.Fail(ctx, p.Source.Where()+" ("+plannedName(p)+")", w.Err)
			if rep.noSpace != nil {
				stop()
			}
			return nil
		}
		return rep.Written(w.Object, writtenName(p, w.Object), rep.o.Verb)
	})
}

// writtenName is what names a written object: the object itself, which
// the store returned with its kind and group and the name it gave it
// (generateName); or, without one, the manifest's kind and name.
func writtenName(p stores.Planned, out runtime.Object) runtime.Object {
	if out != nil && !out.GetObjectKind().GroupVersionKind().Empty() {
		return out
	}
	return render.NameOnly(p.Source.GVK, p.Source.Namespace, p.Source.Name)
}

// plannedName names a manifest's object in messages as kubectl's name
// printer names it: deployment.apps/web.
func plannedName(p stores.Planned) string {
	var name strings.Builder
	printer, err := render.NamePrinter("")
	if err == nil {
		err = printer.PrintObj(render.NameOnly(p.Source.GVK, p.Source.Namespace, p.Source.Name), &name)
	}
	if err != nil {
		return strings.ToLower(p.Source.GVK.Kind) + "/" + p.Source.Name
	}
	return strings.TrimSuffix(name.String(), "\n")
}
