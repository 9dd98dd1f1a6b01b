// Package writes writes the objects of a manifest through the stores of the
// storage map, as create and replace do: it reads the files, plans every
// object (resolves its kind to a path of the map, scopes its namespace,
// decodes and checks it through the store), refuses the whole manifest if
// any object is bad, writes each, and reports what became of each as
// kubectl does. In a sandbox it establishes the CRDs it wrote and then
// writes the custom resources that awaited them. It deletes objects too, as
// delete does, through the stores of the types named, reported the same
// way.
//
// It takes the map as an interface and what the session does beyond it as
// function fields, so that it links nothing of the map's assembly
// (internal/storagemap); the commands build the map and hand it in.
package writes

import (
	"context"
	"fmt"
	"io"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/regctl/regctl/internal/gctune"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/manifest"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/stores"
)

// Map is what planning needs of the storage map.
type Map interface {
	// ResolveKind is the path of a manifest object's apiVersion and kind,
	// as kubectl maps them.
	ResolveKind(schema.GroupVersionKind) (*handle.Handle, error)
	// Subresource is the path of the subresource sub of h, h itself when
	// sub is empty.
	Subresource(h *handle.Handle, sub string) (*handle.Handle, error)
	// NotEstablished names the CRD that would serve gvk once established,
	// empty when there is none: it says why the kind is not served.
	NotEstablished(schema.GroupVersionKind) string
	// Serves tells whether the map serves the group version.
	Serves(schema.GroupVersion) bool
	// Handle is the handle of a path: namespaces, which the writes look
	// their namespace up through.
	Handle(path string) (*handle.Handle, error)
	// RESTMapper is the map's names, as kubectl maps them.
	RESTMapper() meta.RESTMapper
}

// Verb is how a command checks and writes a manifest's objects.
type Verb struct {
	// Name is what was done, in reports: "created", "replaced".
	Name    string
	Options stores.WriteOptions
	// Check runs the store's own checks on a decoded object and writes
	// nothing: every object is checked before the first is written.
	Check func(context.Context, stores.WriteOptions, stores.Planned, runtime.Object) error
	Write func(context.Context, stores.WriteOptions, stores.Planned, runtime.Object) (runtime.Object, error)
}

// Scope is the namespace of a manifest's namespaced objects: -n.
type Scope struct {
	// Namespace is where the objects that name none go.
	Namespace string
	// Explicit is set when -n was given: an object that names another
	// namespace is then a mistake.
	Explicit bool
}

// Manifest is a manifest to write, and how.
type Manifest struct {
	// Filenames are the -f files, "-" for In; Recursive reads the
	// subdirectories of a directory too (-R).
	Filenames []string
	Recursive bool
	In        io.Reader
	// Out gets a line per write, or the written objects with Output;
	// ErrOut the warnings and errors.
	Out, ErrOut io.Writer
	Output      render.Format // empty: a line per write
	DryRun      bool
	Scope       Scope
	// Subresource writes through that subresource's store (replace
	// --subresource status).
	Subresource string
	// AllowPlaintext writes resources in plain text where their stored
	// values are encrypted.
	AllowPlaintext bool
	// Validation is the field validation objects are decoded with
	// (metav1.FieldValidation*).
	Validation string
	Verb       Verb

	// Maps builds the map the manifest is written on, once it is read.
	Maps Maps
}

// Maps builds the map a manifest is written on, once the manifest is read:
// a manifest that does not read builds nothing. The caller closes what it
// builds.
type Maps interface {
	// Open builds the map for the kinds of the manifest's objects.
	Open(ctx context.Context, kinds []schema.GroupVersionKind) (Map, error)
	// Sandbox tells whether no server runs on the etcd to establish the
	// CRDs a manifest writes, as a server's apiextensions controllers
	// would: then Establish does, and only then are the custom resources
	// of a manifest's own CRDs written, on the map Reopen builds again to
	// serve them. A dry run establishes nothing.
	Sandbox() bool
	Establish(ctx context.Context, names []string) error
	// Reopen builds the map again; when it fails, the one Open built is
	// closed already.
	Reopen(ctx context.Context) (Map, error)
	// Server is the config of a client of the map's own API, served
	// in-process by the server's request handlers, once Open built it:
	// what kubectl's own code (diff) talks to.
	Server() *rest.Config
}

// Run reads the manifest, plans and checks every object against the map,
// refuses the whole manifest if any object is bad, and otherwise writes
// each with the verb, saying what became of it. Its error sums up what
// was not written.
func Run(ctx context.Context, m Manifest) error {
	// A manifest is held in memory while it is written; pace the collector
	// for that from the start.
	gctune.Steady()
	objs, readErrs := readManifest(m.In, m.Filenames, m.Recursive)
	if len(objs) == 0 {
		return refuse(m.ErrOut, readErrs)
	}
	mp, err := m.Maps.Open(ctx, kindsOf(objs))
	if err != nil {
		return err
	}
	r := &run{Manifest: m, m: mp, options: m.Verb.Options}
	now, awaiting := r.awaitingCRDs(objs)
	todo, err := r.plan(ctx, now, readErrs)
	if err != nil {
		return err
	}
	return r.writePlanned(ctx, todo, awaiting)
}

// run is one Run: the manifest, the map it is planned on, and the verb's
// write options on that map.
type run struct {
	Manifest
	m Map
	// options are the verb's, with the namespace cache of m; they change
	// with the map, between writes.
	options stores.WriteOptions
}

// establishes tells whether this run establishes the CRDs it writes.
func (r *run) establishes() bool { return r.Maps != nil && r.Maps.Sandbox() && !r.DryRun }

// plan checks every object of the manifest against the map, as the verb
// would write it; any error refuses the whole manifest, after reporting
// them all.
func (r *run) plan(ctx context.Context, objs []manifest.Object, readErrs []error) ([]stores.Planned, error) {
	todo, errs := r.planErrs(ctx, objs, readErrs)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%w while checking the manifest: nothing was written", context.Cause(ctx))
	}
	if len(errs) > 0 {
		return nil, refuse(r.ErrOut, errs)
	}
	return todo, nil
}

// planErrs is plan, returning the errors instead of refusing.
func (r *run) planErrs(ctx context.Context, objs []manifest.Object, readErrs []error) ([]stores.Planned, []error) {
	// A map without namespaces leaves the cache without a handle; a
	// namespaced write then says so.
	namespaces, _ := r.m.Handle("namespaces")
	r.options.Namespaces = stores.NewNamespaceCache(namespaces)
	resolve := func(obj manifest.Object) (handle.Target, error) {
		return planTarget(r.m, obj, r.Scope, r.Subresource)
	}
	check := func(ctx context.Context, p stores.Planned, obj runtime.Object) error {
		return r.Verb.Check(ctx, r.options, p, obj)
	}
	todo, errs := stores.Plan(ctx, objs, r.Validation, resolve, check)
	return todo, append(append(readErrs, errs...), r.checkPlaintext(ctx, objs)...)
}

// writePlanned writes each planned object with the verb, then establishes
// the CRDs written in a sandbox, and then writes the objects awaiting them,
// on the map built again to serve them.
func (r *run) writePlanned(ctx context.Context, todo []stores.Planned, awaiting []manifest.Object) error {
	if !r.DryRun {
		fmt.Fprintln(r.ErrOut, stores.BypassWarning)
	}
	objectWarnings(r.ErrOut, todo)
	crds := &sandboxCRDs{on: r.establishes()}
	rep := NewReport(ReportOptions{Out: r.Out, ErrOut: r.ErrOut, Output: r.Output, DryRun: r.DryRun, Verb: r.Verb.Name, Total: len(todo) + len(awaiting), Named: true})
	write := func(ctx context.Context, p stores.Planned) (runtime.Object, error) {
		obj, err := p.Decode()
		if err != nil {
			return nil, err
		}
		out, err := r.Verb.Write(ctx, r.options, p, obj)
		if err == nil {
			crds.add(p.Target, out)
		}
		return out, err
	}
	if err := reportEach(ctx, rep, todo, write); err != nil {
		return err
	}
	establishErr := crds.establish(ctx, r.Maps.Establish, r.ErrOut)
	if establishErr == nil && len(awaiting) > 0 && ctx.Err() == nil {
		if err := r.writeAwaiting(ctx, rep, awaiting, write); err != nil {
			return err
		}
	}
	err := rep.Finish(ctx)
	switch {
	case establishErr == nil:
		return err
	case err == nil:
		return establishErr
	}
	reportAll(r.ErrOut, []error{establishErr})
	return err
}

// writeAwaiting writes the custom resources of a manifest whose CRDs this
// command established in the sandbox: it builds the map again, which now
// serves them, and checks them all first, as any manifest's objects are; a
// bad one leaves them all unwritten (the CRDs stay).
func (r *run) writeAwaiting(ctx context.Context, rep *Report, awaiting []manifest.Object, write func(context.Context, stores.Planned) (runtime.Object, error)) error {
	reopened, err := r.Maps.Reopen(ctx)
	if err != nil {
		// Counted as not attempted.
		reportAll(r.ErrOut, []error{fmt.Errorf("building the map again to serve the custom resources of the CRDs established: %w", err)})
		return nil
	}
	r.m = reopened
	todo, errs := r.planErrs(ctx, awaiting, nil)
	if ctx.Err() != nil {
		return nil
	}
	if len(errs) > 0 {
		reportAll(r.ErrOut, errs)
		rep.refused(len(awaiting))
		return nil
	}
	objectWarnings(r.ErrOut, todo)
	return reportEach(ctx, rep, todo, write)
}

// objectWarnings prints what `--validate=warn` found in each object, as
// kubectl prints the apiserver's warnings.
func objectWarnings(errOut io.Writer, objs []stores.Planned) {
	for _, p := range objs {
		for _, w := range p.Warnings {
			fmt.Fprintf(errOut, "Warning: %s\n", w)
		}
	}
}

// kindsOf are the kinds of objs, each once, in manifest order.
func kindsOf(objs []manifest.Object) []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for _, o := range objs {
		if !slices.Contains(out, o.GVK) {
			out = append(out, o.GVK)
		}
	}
	return out
}
