package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/regctl/regctl/internal/gctune"
	"github.com/regctl/regctl/internal/manifest"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/stores"
	"github.com/regctl/regctl/internal/wiring"
)

// writeOptions are shared by create, replace and delete.
type writeOptions struct {
	*globalOptions
	scopeOptions
	Output render.Format // empty: messages only
	DryRun bool
}

var writeFormats = []render.Format{render.YAML, render.JSON, render.Name}

func addWriteFlags(fs *pflag.FlagSet, o *writeOptions, output *string) {
	fs.StringVarP(output, "output", "o", "", "Also print the stored objects: yaml|json|name")
	fs.BoolVar(&o.DryRun, "dry-run", false, "Run defaulting, strategies and validation, print the result, write nothing")
}

func (o *writeOptions) parseOutput(s string) error {
	if s == "" {
		return nil
	}
	f, err := render.ParseFormat(s, writeFormats...)
	o.Output = f
	return err
}

// bypassWarning is said once per write: regctl writes what the stores write,
// and nothing in front of them runs.
const bypassWarning = "warning: regctl writes straight to etcd through the apiserver's stores: admission plugins (but for namespace lifecycle), webhooks and authorization do not run"

func writeWarning(errOut io.Writer) { fmt.Fprintln(errOut, bypassWarning) }

// readManifest reads -f FILE, or standard input for "-".
func readManifest(in io.Reader, filename string) ([]manifest.Object, []error) {
	if filename == "" {
		return nil, []error{fmt.Errorf("`-f` is required: a file, or - for standard input")}
	}
	r := in
	if filename != "-" {
		f, err := os.Open(filename)
		if err != nil {
			return nil, []error{fmt.Errorf("reading %s: %w", filename, err)}
		}
		defer f.Close()
		r = f
	}
	return manifest.Read(r)
}

// planned is one manifest object resolved to its path and checked to decode
// into the store's internal type, ready to be written. The decoded object is
// not kept: a manifest of many objects would be held in memory whole.
type planned struct {
	src    manifest.Object
	target stores.Target
}

// decode decodes the object again, for writing.
func (p planned) decode() (runtime.Object, error) { return stores.Decode(p.target, p.src.JSON) }

// label names an object in messages: pod/web (document 2).
func (p planned) label() string {
	return strings.ToLower(p.src.GVK.Kind) + "/" + p.src.Name
}

// plan resolves and decodes every object first, so that a stream with a bad
// document is refused whole, before anything is written.
func plan(w *wiring.Wiring, objs []manifest.Object, scope scopeOptions, subresource string) ([]planned, []error) {
	results := make([]planned, len(objs))
	failures := make([]error, len(objs))
	manifest.Parallel(len(objs), func(i int) {
		o := objs[i]
		if results[i], failures[i] = planOne(w, o, scope, subresource); failures[i] != nil {
			failures[i] = &manifest.Error{Doc: o.Doc, Item: o.Item, Err: failures[i]}
		}
	})
	var out []planned
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

func planOne(w *wiring.Wiring, o manifest.Object, scope scopeOptions, subresource string) (planned, error) {
	res, err := resolveKind(w, o.GVK)
	if err != nil {
		return planned{}, err
	}
	t := stores.Target{Path: res.Name, Resource: res}
	if subresource != "" {
		sub, ok := w.Subresource(res.Name, subresource)
		if !ok {
			return planned{}, fmt.Errorf("%s has no subresource %q", res.Name, subresource)
		}
		t.Path = sub.Name
	}
	if res.Namespaced {
		switch {
		case o.Namespace == "":
			t.Namespace = scope.Namespace
		case scope.namespaceSet && o.Namespace != scope.Namespace:
			return planned{}, fmt.Errorf("the object's namespace %q does not match `-n %s`", o.Namespace, scope.Namespace)
		default:
			t.Namespace = o.Namespace
		}
	}
	if _, err := stores.Decode(t, o.JSON); err != nil {
		return planned{}, err
	}
	return planned{src: o, target: t}, nil
}

// reportAll prints each error on its own line, in document order.
func reportAll(errOut io.Writer, errs []error) {
	slices.SortStableFunc(errs, func(a, b error) int {
		var ea, eb *manifest.Error
		if !errors.As(a, &ea) || !errors.As(b, &eb) {
			return 0
		}
		return cmp.Or(cmp.Compare(ea.Doc, eb.Doc), cmp.Compare(ea.Item, eb.Item))
	})
	for _, err := range errs {
		fmt.Fprintf(errOut, "error: %s\n", oneLine(err))
	}
}

// writeManifest reads the manifest in filename, plans every object against
// the map of the user's etcd, refuses the whole manifest if any object is
// bad, and otherwise writes each with write, within the request timeout.
func (o *writeOptions) writeManifest(ctx context.Context, filename, subresource, verb string, write func(context.Context, *wiring.Wiring, planned, runtime.Object) (runtime.Object, error)) error {
	// A manifest is held in memory while it is written; pace the collector
	// for that from the start.
	gctune.Steady()
	objs, readErrs := readManifest(o.IO.In, filename)
	if len(objs) == 0 {
		return refuse(o.IO.ErrOut, readErrs)
	}
	w, err := o.buildLive(ctx)
	if err != nil {
		return err
	}
	defer w.Close()
	todo, errs := plan(w, objs, o.scopeOptions, subresource)
	if errs = append(readErrs, errs...); len(errs) > 0 {
		return refuse(o.IO.ErrOut, errs)
	}
	writeWarning(o.IO.ErrOut)
	return writeEach(ctx, o, todo, verb, func(ctx context.Context, p planned) (runtime.Object, error) {
		ctx, cancel := context.WithTimeout(ctx, o.RequestTimeout)
		defer cancel()
		obj, err := p.decode()
		if err != nil {
			return nil, err
		}
		return write(ctx, w, p, obj)
	})
}

// Writes run concurrently within a window of consecutive objects of the
// same kind: a manifest's order matters between kinds (a namespace before
// its pods) but not among the pods themselves, unless one names the same
// object twice, where the first must win. Each window is reported in
// document order before the next starts.
const (
	writers     = 8
	writeWindow = 64
)

// writeEach runs write on every planned object, saying on stderr what became
// of each in document order, and printing the results with -o as they come.
// A failure does not stop the others; it makes the exit code 1.
func writeEach(ctx context.Context, o *writeOptions, objs []planned, verb string, write func(context.Context, planned) (runtime.Object, error)) error {
	suffix := ""
	if o.DryRun {
		suffix = " (dry run)"
	}
	printer := newWrittenPrinter(o, len(objs))
	failed := 0
	for start := 0; start < len(objs); {
		end := windowEnd(objs, start)
		window := objs[start:end]
		outs := make([]runtime.Object, len(window))
		errs := make([]error, len(window))
		var wg sync.WaitGroup
		sem := make(chan struct{}, writers)
		for i := range window {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				outs[i], errs[i] = write(ctx, window[i])
			}()
		}
		wg.Wait()
		for i, p := range window {
			if errs[i] != nil {
				failed++
				fmt.Fprintf(o.IO.ErrOut, "error: %s (%s): %s\n", p.src.Where(), p.label(), oneLine(errs[i]))
				continue
			}
			name := p.label()
			if m, err := meta.Accessor(outs[i]); err == nil {
				name = strings.ToLower(p.src.GVK.Kind) + "/" + m.GetName()
			}
			fmt.Fprintf(o.IO.ErrOut, "%s %s%s\n", name, verb, suffix)
			if err := printer.add(outs[i]); err != nil {
				return err
			}
		}
		start = end
	}
	if err := printer.close(); err != nil {
		return err
	}
	if failed > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d of %d objects were not %s", failed, len(objs), verb)}
	}
	return nil
}

// windowEnd is the end of the window of objects that starts at start.
func windowEnd(objs []planned, start int) int {
	seen := map[string]bool{}
	end := start
	for ; end < len(objs) && end-start < writeWindow && objs[end].src.GVK == objs[start].src.GVK; end++ {
		if name := objs[end].src.Name; name != "" {
			key := objs[end].target.Namespace + "/" + name
			if seen[key] {
				break
			}
			seen[key] = true
		}
	}
	return end
}

// writtenPrinter prints written objects with -o: one object as itself when
// the manifest held one, otherwise a List (or names), streamed.
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
	p.n++
	switch {
	case p.o.Output == "":
		return nil
	case p.single:
		return render.Print(p.o.IO.Out, p.o.Output, obj)
	}
	return p.lw.Add(obj)
}

func (p *writtenPrinter) close() error {
	if p.lw == nil || p.n == 0 {
		return nil
	}
	return p.lw.Close()
}

// refuse reports every problem of a manifest and says nothing was written.
func refuse(errOut io.Writer, errs []error) error {
	reportAll(errOut, errs)
	return &exitError{code: 1, err: errors.New("nothing was written")}
}
