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
	// AllowPlaintext writes resources in plain text where their stored
	// values are encrypted (create and replace).
	AllowPlaintext bool
}

var writeFormats = []render.Format{render.YAML, render.JSON, render.Name}

func addWriteFlags(fs *pflag.FlagSet, o *writeOptions, output *string) {
	fs.StringVarP(output, "output", "o", "", "Also print the stored objects: yaml|json|name")
	fs.BoolVar(&o.DryRun, "dry-run", false, "Run defaulting, strategies and validation, print the result, write nothing")
}

// addPlaintextFlag is `--allow-plaintext`, for the commands that write
// object values.
func addPlaintextFlag(fs *pflag.FlagSet, o *writeOptions) {
	fs.BoolVar(&o.AllowPlaintext, "allow-plaintext", false, "Write resources whose stored values are encrypted in plain text, without `--encryption-provider-config`")
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

// planned is one manifest object resolved to its path, decoded into the
// store's internal type and checked, ready to be written. The decoded object
// is not kept: a manifest of many objects would be held in memory whole.
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

// manifestVerb is how create or replace checks and writes a manifest's objects.
type manifestVerb struct {
	name    string // "created", "replaced"
	options stores.WriteOptions
	// check runs the store's own checks on a decoded object and writes
	// nothing: every object is checked before the first is written.
	check func(context.Context, stores.WriteOptions, planned, runtime.Object) error
	write func(context.Context, stores.WriteOptions, planned, runtime.Object) (runtime.Object, error)
}

// plan resolves, decodes and checks every object first, so that a stream
// with a bad document is refused whole, before anything is written.
func plan(ctx context.Context, w *wiring.Wiring, objs []manifest.Object, scope scopeOptions, subresource string, v manifestVerb) ([]planned, []error) {
	results := make([]planned, len(objs))
	failures := make([]error, len(objs))
	parallel(len(objs), func(i int) {
		o := objs[i]
		if results[i], failures[i] = planOne(ctx, w, o, scope, subresource, v); failures[i] != nil {
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

func planOne(ctx context.Context, w *wiring.Wiring, o manifest.Object, scope scopeOptions, subresource string, v manifestVerb) (planned, error) {
	t, err := planTarget(w, o, scope, subresource)
	if err != nil {
		return planned{}, err
	}
	p := planned{src: o, target: t}
	obj, err := p.decode()
	if err != nil {
		return planned{}, err
	}
	if err := v.check(ctx, v.options, p, obj); err != nil {
		return planned{}, err
	}
	return p, nil
}

// planTarget resolves the path and namespace an object is written to.
func planTarget(w *wiring.Wiring, o manifest.Object, scope scopeOptions, subresource string) (stores.Target, error) {
	res, err := resolveKind(w, o.GVK)
	if err != nil {
		return stores.Target{}, err
	}
	h, err := pathHandle(w, res.Name, subresource)
	if err != nil {
		return stores.Target{}, err
	}
	t := stores.Target{Handle: h}
	if res.Namespaced {
		switch {
		case o.Namespace == "":
			t.Namespace = scope.Namespace
		case scope.namespaceSet && o.Namespace != scope.Namespace:
			return stores.Target{}, fmt.Errorf("the object's namespace %q does not match `-n %s`", o.Namespace, scope.Namespace)
		default:
			t.Namespace = o.Namespace
		}
	}
	return t, nil
}

// checkPlaintext refuses, once per path, to write in plain text a resource
// whose stored values are encrypted, unless `--allow-plaintext`. It looks at
// every object, those that failed their own checks too: without the
// encryption config, a replace of an encrypted object fails to read it, and
// this says why.
func (o *writeOptions) checkPlaintext(ctx context.Context, w *wiring.Wiring, objs []manifest.Object, subresource string) []error {
	if o.AllowPlaintext {
		return nil
	}
	var errs []error
	seen := map[string]bool{}
	for _, obj := range objs {
		t, err := planTarget(w, obj, o.scopeOptions, subresource)
		if err != nil || seen[t.Path] {
			continue
		}
		seen[t.Path] = true
		if err := stores.CheckPlaintext(ctx, t.Handle); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
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

// writeManifest reads the manifest in filename, plans and checks every
// object against the map of the user's etcd, refuses the whole manifest if
// any object is bad, and otherwise writes each with v.write.
func (o *writeOptions) writeManifest(ctx context.Context, filename, subresource string, v manifestVerb) error {
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
	v.options.Namespaces = stores.NewNamespaceCache(w.Handles["namespaces"])
	todo, errs := plan(ctx, w, objs, o.scopeOptions, subresource, v)
	errs = append(append(readErrs, errs...), o.checkPlaintext(ctx, w, objs, subresource)...)
	if ctx.Err() != nil {
		return &exitError{code: 1, err: fmt.Errorf("%w while checking the manifest: nothing was written", context.Cause(ctx))}
	}
	if len(errs) > 0 {
		return refuse(o.IO.ErrOut, errs)
	}
	writeWarning(o.IO.ErrOut)
	return writeEach(ctx, o, todo, v.name, func(ctx context.Context, p planned) (runtime.Object, error) {
		obj, err := p.decode()
		if err != nil {
			return nil, err
		}
		return v.write(ctx, v.options, p, obj)
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
// A failure does not stop the others; it makes the exit code 1. Once the
// context is done no new write starts.
func writeEach(ctx context.Context, o *writeOptions, objs []planned, verb string, write func(context.Context, planned) (runtime.Object, error)) error {
	rep := newWriteReport(o, verb, len(objs), true)
	for start := 0; start < len(objs) && ctx.Err() == nil; {
		end := windowEnd(objs, start)
		results := writeAll(ctx, objs[start:end], write)
		for i, p := range objs[start:end] {
			r := results[i]
			switch {
			case !r.started:
				// Summed up as not attempted.
			case r.err != nil:
				rep.fail(ctx, p.src.Where()+" ("+p.label()+")", r.err)
			default:
				if err := rep.written(writtenName(p, r.out), verb, r.out); err != nil {
					return err
				}
			}
		}
		start = end
	}
	return rep.finish(ctx)
}

// writtenName is kind/name of a written object, with the name the store
// gave it (generateName).
func writtenName(p planned, out runtime.Object) string {
	if m, err := meta.Accessor(out); err == nil {
		return strings.ToLower(p.src.GVK.Kind) + "/" + m.GetName()
	}
	return p.label()
}

type writeResult struct {
	out     runtime.Object
	err     error
	started bool
}

// writeAll writes a window of objects, writers at a time, and starts no
// write once the context is done.
func writeAll(ctx context.Context, window []planned, write func(context.Context, planned) (runtime.Object, error)) []writeResult {
	results := make([]writeResult, len(window))
	var wg sync.WaitGroup
	sem := make(chan struct{}, writers)
	for i := range window {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		results[i].started = true
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			results[i].out, results[i].err = write(ctx, window[i])
		}()
	}
	wg.Wait()
	return results
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

// refuse reports every problem of a manifest and says nothing was written.
func refuse(errOut io.Writer, errs []error) error {
	reportAll(errOut, errs)
	return &exitError{code: 1, err: errors.New("nothing was written")}
}
