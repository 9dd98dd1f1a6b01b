package restore

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/stores"
)

// batch is how many objects are written side by side; the lines of a
// batch are said in the plan's order once it is written, and an
// interrupt stops the restore between two batches.
const (
	batch   = 512
	writers = 32
	// readers read the source side by side.
	readers = 8
)

// apply writes the entries to write, level by level (an object's owners
// are written in a level before its own), batch by batch, and says what
// became of each entry in their order.
func (r *restorer) apply(ctx context.Context, levels [][]*entry) error {
	if r.started.IsZero() {
		r.started = time.Now()
	}
	for _, level := range levels {
		for _, e := range level {
			if e.write != nil {
				r.toWrite++
			}
		}
	}
	if r.toWrite > 0 && !r.warned && !r.req.DryRun {
		fmt.Fprintln(r.req.ErrOut, stores.BypassWarning)
		r.warned = true
	}
	for _, level := range levels {
		for start := 0; start < len(level); start += batch {
			if err := r.applyBatch(ctx, level[start:min(start+batch, len(level))]); err != nil {
				return err
			}
		}
	}
	return nil
}

// applyBatch writes the entries of part side by side, then says what
// became of each, in order.
func (r *restorer) applyBatch(ctx context.Context, part []*entry) error {
	if ctx.Err() != nil {
		r.report.Interrupted = true
		return fmt.Errorf("restore interrupted: %d %s written; run it again to restore the rest", r.written, render.Plural(r.written, "object", "objects"))
	}
	var noSpace atomic.Pointer[error]
	g := errgroup.Group{}
	g.SetLimit(writers)
	for _, e := range part {
		if e.write == nil {
			continue
		}
		g.Go(func() error {
			// A write once begun is let end, so that what was written is
			// known: an interrupt stops the restore between batches.
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.req.Timeout)
			defer cancel()
			if err := e.write(wctx, e); err != nil {
				if etcdview.NoSpace(err) {
					// Said once, for all: etcd refuses every write alike.
					noSpace.CompareAndSwap(nil, &err)
					e.Result, e.Reason, e.quiet = Failed, "etcd is out of space", true
					return nil
				}
				e.fail(err)
				if svc, ok := e.obj.(*api.Service); ok && e.Result == Skipped {
					if held := r.heldBy(wctx, svc, err); held != "" {
						e.Reason += ": " + held
					}
				}
			}
			return nil
		})
	}
	_ = g.Wait()
	for _, e := range part {
		if err := r.said(e); err != nil {
			return err
		}
	}
	if err := noSpace.Load(); err != nil {
		r.report.Interrupted = true
		return fmt.Errorf("restore stopped: %d %s written, %d not: %w", r.written, render.Plural(r.written, "object", "objects"), r.toWrite-r.written, &etcdview.SpaceError{Err: *err})
	}
	r.req.Progress.Show(time.Since(r.started), fmt.Sprintf("restoring: %d of %d objects written, %s", r.written, r.toWrite, render.Rate(int64(r.written), int64(r.toWrite), time.Since(r.started))))
	return nil
}

// said adds e to the report and says what became of it.
func (r *restorer) said(e *entry) error {
	if e.write != nil && (e.Result == Restored || e.Result == Overwritten) {
		r.written++
		if e.Resource == handle.CRDsPath {
			if r.writtenCRDs == nil {
				r.writtenCRDs = map[string]bool{}
			}
			r.writtenCRDs[e.Name] = true
		}
	}
	if r.req.DryRun && e.Result == Restored && e.Namespace == "" && e.Resource == "namespaces" {
		// What a dry run would write into it is checked as if it were.
		if ns, ok := e.obj.(*api.Namespace); ok {
			r.namespaces.Assume(ns)
		}
	}
	r.report.Objects = append(r.report.Objects, e.Object)
	if r.lines == nil {
		return nil
	}
	return r.lines.say(e)
}

// fail records a write that failed: a key taken since the comparison, a
// cluster IP another service holds, a conflict, or any other error.
func (e *entry) fail(err error) {
	switch {
	case apierrors.IsAlreadyExists(err):
		e.Result, e.Reason = Skipped, "an object of the same name was created meanwhile"
	case apierrors.IsConflict(err):
		e.Result, e.Reason = Skipped, "it changed meanwhile: "+render.OneLine(err)
	case apierrors.IsInvalid(err) || apierrors.IsForbidden(err):
		e.Result, e.Reason = Skipped, render.OneLine(err)
	default:
		e.Result, e.Reason = Failed, render.OneLine(err)
		var loss *stores.LossError
		if errors.As(err, &loss) {
			e.Result = Skipped
		}
	}
}

// create writes the source's object where its key is free.
func (r *restorer) create(ctx context.Context, e *entry) error {
	_, err := stores.CreateAsStored(ctx, e.live, e.obj, r.writeOptions())
	return err
}

// overwrite writes the source's object over the one stored now, if that is
// still the one compared.
func (r *restorer) overwrite(ctx context.Context, e *entry) error {
	_, err := stores.ReplaceAsStored(ctx, e.live, e.obj, e.liveUID, e.liveVersion, r.writeOptions())
	return err
}

func (r *restorer) writeOptions() stores.WriteOptions {
	return stores.WriteOptions{DryRun: r.req.DryRun, Namespaces: r.namespaces}
}

// ownersFirst orders entries in levels, so that an object comes in a
// level after the objects it names as owners, among those written: the
// garbage collector deletes an object whose owners it cannot find.
// Otherwise the order stays the comparison's (resource by resource, in key
// order); a cycle of owners keeps it too.
func ownersFirst(entries []*entry) [][]*entry {
	pending := map[types.UID]bool{}
	for _, e := range entries {
		if e.write != nil && e.UID != "" {
			pending[types.UID(e.UID)] = true
		}
	}
	var levels [][]*entry
	left := entries
	for len(left) > 0 {
		var level, next []*entry
		for _, e := range left {
			if waitsFor(e, pending) {
				next = append(next, e)
			} else {
				level = append(level, e)
			}
		}
		if len(level) == 0 {
			return append(levels, next) // a cycle
		}
		for _, e := range level {
			if e.write != nil {
				delete(pending, types.UID(e.UID))
			}
		}
		levels = append(levels, level)
		left = next
	}
	return levels
}

// waitsFor tells whether e names an owner still to be written.
func waitsFor(e *entry, pending map[types.UID]bool) bool {
	for _, o := range e.owners {
		if pending[o] && string(o) != e.UID {
			return true
		}
	}
	return false
}

// summary counts what became of the objects in one line, says what was
// not restored, and why the exit status is 1: something was left alone,
// or nothing in the source matched what the command named.
func (r *restorer) summary() error {
	if len(r.report.Objects) == 0 {
		return &NothingError{Source: r.req.From.Name, Selection: r.req.Selection}
	}
	count := map[string]int{}
	for _, o := range r.report.Objects {
		count[o.Result]++
	}
	differ, skipped, failed := count[Differs], count[Skipped], count[Failed]
	if r.lines != nil {
		line := fmt.Sprintf("%d restored, %d unchanged, %d %s, %d skipped", count[Restored], count[Unchanged], differ, render.Plural(differ, "differs", "differ"), skipped)
		if n := count[Overwritten]; n > 0 {
			line += fmt.Sprintf(", %d overwritten", n)
		}
		if failed > 0 {
			line += fmt.Sprintf(", %d failed", failed)
		}
		line += " from " + r.req.From.Name
		if r.req.DryRun {
			line += " (dry run: nothing written)"
		}
		fmt.Fprintln(r.req.Out, line)
	}
	if differ+skipped+failed == 0 {
		return nil
	}
	if differ > 0 && r.lines != nil {
		fmt.Fprintf(r.req.ErrOut, "%d %s %s from %s and %s left alone: `--overwrite` writes the source's over %s\n",
			differ, render.Plural(differ, "object", "objects"), render.Plural(differ, "differs", "differ"), r.req.From.Name, render.Plural(differ, "was", "were"), render.Plural(differ, "it", "them"))
	}
	return ErrLeftAlone
}
