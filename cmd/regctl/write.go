package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

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
	// Validation is kubectl's --validate (create and replace).
	Validation validation
	// FieldManager is kubectl's --field-manager (create and replace): the
	// manager managedFields records the write as.
	FieldManager string
}

var writeFormats = []render.Format{render.YAML, render.JSON, render.Name}

func addWriteFlags(fs *pflag.FlagSet, o *writeOptions, output *string) {
	fs.StringVarP(output, "output", "o", "", "Print the stored objects (yaml|json) or their names (name) instead of a line per write, as kubectl does")
	fs.BoolVar(&o.DryRun, "dry-run", false, "Run defaulting, strategies and validation, print the result, write nothing")
}

// addManifestFlags are the flags of the commands that write a manifest's
// objects.
func addManifestFlags(cmd *cobra.Command, o *writeOptions) {
	fs := cmd.Flags()
	addPlaintextFlag(fs, o)
	cmdutil.AddFieldManagerFlagVar(cmd, &o.FieldManager, stores.DefaultFieldManager)
	o.Validation = metav1.FieldValidationStrict
	f := fs.VarPF(&o.Validation, "validate", "", "Field validation, as kubectl's: strict (unknown or duplicate fields are errors), warn (they are warnings) or ignore; a custom resource's unknown fields are pruned unless strict")
	f.NoOptDefVal = "strict"
}

// validation is kubectl's --validate, read as kubectl reads it into the
// fieldValidation it asks the apiserver for.
type validation string

func (v *validation) String() string { return strings.ToLower(string(*v)) }
func (v *validation) Type() string   { return "string" }
func (v *validation) Set(s string) error {
	switch strings.ToLower(s) {
	case "strict", "true":
		*v = metav1.FieldValidationStrict
	case "warn":
		*v = metav1.FieldValidationWarn
	case "ignore", "false":
		*v = metav1.FieldValidationIgnore
	default:
		return fmt.Errorf("valid values are strict|warn|ignore, not %q", s)
	}
	return nil
}

// addPlaintextFlag is `--allow-plaintext`, for the commands that write
// object values.
func addPlaintextFlag(fs *pflag.FlagSet, o *writeOptions) {
	fs.BoolVar(&o.AllowPlaintext, "allow-plaintext", false, "Write resources whose stored values are encrypted in plain text, without `--encryption-provider-config`")
}

// checkFlags checks what every write is given beside its own flags.
func (o *writeOptions) checkFlags(output string) error {
	if o.Revision != 0 {
		return errWriteAtRevision
	}
	// As the server checks the fieldManager a request names.
	if errs := metav1validation.ValidateFieldManager(o.FieldManager, field.NewPath("fieldManager")); len(errs) > 0 {
		return fmt.Errorf("`--field-manager`: %s", errs.ToAggregate())
	}
	return o.parseOutput(output)
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

// writeWarnings is writeWarning, then what `--validate=warn` found in each
// object, as kubectl prints the apiserver's warnings.
func writeWarnings(errOut io.Writer, objs []stores.Planned) {
	writeWarning(errOut)
	for _, p := range objs {
		for _, w := range p.Warnings {
			fmt.Fprintf(errOut, "Warning: %s\n", w)
		}
	}
}

// readManifest reads each -f FILE in turn, standard input for "-", as
// kubectl takes several. With more than one, each object and error names
// its file.
func readManifest(in io.Reader, filenames []string) (objs []manifest.Object, errs []error) {
	if len(filenames) == 0 {
		return nil, []error{fmt.Errorf("`-f` is required: a file, or - for standard input")}
	}
	for i, name := range filenames {
		o, e := readManifestFile(in, name)
		if len(filenames) > 1 {
			manifest.InFile(o, e, name, i)
		}
		objs, errs = append(objs, o...), append(errs, e...)
	}
	return objs, errs
}

func readManifestFile(in io.Reader, filename string) ([]manifest.Object, []error) {
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

// manifestVerb is how create or replace checks and writes a manifest's objects.
type manifestVerb struct {
	name    string // "created", "replaced"
	options stores.WriteOptions
	// check runs the store's own checks on a decoded object and writes
	// nothing: every object is checked before the first is written.
	check func(context.Context, stores.WriteOptions, stores.Planned, runtime.Object) error
	write func(context.Context, stores.WriteOptions, stores.Planned, runtime.Object) (runtime.Object, error)
}

// planTarget resolves the path and namespace an object is written to.
func planTarget(w *wiring.Wiring, o manifest.Object, scope scopeOptions, subresource string) (stores.Target, error) {
	base, err := resolveKind(w, o.GVK)
	if err != nil {
		return stores.Target{}, err
	}
	h, err := w.Subresource(base, subresource)
	if err != nil {
		return stores.Target{}, err
	}
	t := stores.Target{Handle: h}
	if base.Resource.Namespaced {
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
		return manifest.Before(ea.At(), eb.At())
	})
	for _, err := range errs {
		fmt.Fprintf(errOut, "error: %s\n", render.OneLine(err))
	}
}

// writeManifest reads the manifest in filename, plans and checks every
// object against the map of the user's etcd, refuses the whole manifest if
// any object is bad, and otherwise writes each with v.write.
func (o *writeOptions) writeManifest(ctx context.Context, filenames []string, subresource string, v manifestVerb) error {
	// A manifest is held in memory while it is written; pace the collector
	// for that from the start.
	gctune.Steady()
	if err := o.writable(); err != nil {
		return err
	}
	objs, readErrs := readManifest(o.IO.In, filenames)
	if len(objs) == 0 {
		return refuse(o.IO.ErrOut, readErrs)
	}
	w, err := o.buildLive(ctx)
	if err != nil {
		return err
	}
	// writePlanned may build the map again.
	defer func() { w.Close() }()
	objs, awaiting := o.awaitingCRDs(w, objs, subresource)
	todo, err := o.plan(ctx, w, objs, readErrs, subresource, &v)
	if err != nil {
		return err
	}
	return o.writePlanned(ctx, &w, todo, awaiting, subresource, v)
}

// awaitingCRDs splits off, in a sandbox, the objects of a manifest that no
// path of the map serves but a CRD of the same manifest will once it is
// established: regctl establishes the CRDs it writes there, and then
// writes these. Elsewhere nothing is split off: on a live etcd only the
// apiserver's controllers establish a CRD, and nothing is established in a
// dry run, so such objects are refused with the rest.
func (o *writeOptions) awaitingCRDs(w *wiring.Wiring, objs []manifest.Object, subresource string) (now, awaiting []manifest.Object) {
	if !w.Sandbox() || o.DryRun || subresource != "" {
		return objs, nil
	}
	served := manifestCRDKinds(objs)
	if len(served) == 0 {
		return objs, nil
	}
	for _, obj := range objs {
		if _, err := w.ResolveKind(obj.GVK); err != nil && served[obj.GVK] {
			awaiting = append(awaiting, obj)
			continue
		}
		now = append(now, obj)
	}
	return now, awaiting
}

// manifestCRDKinds are the kinds the CRDs of a manifest serve once
// established: each served version of its group, with its kind. A CRD that
// does not decode serves nothing here; its own check says why.
func manifestCRDKinds(objs []manifest.Object) map[schema.GroupVersionKind]bool {
	kinds := map[schema.GroupVersionKind]bool{}
	for _, obj := range objs {
		if obj.GVK != apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition") {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := json.Unmarshal(obj.JSON, crd); err != nil {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Served {
				kinds[schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}] = true
			}
		}
	}
	return kinds
}

// writePlanned writes each planned object with v.write, then establishes
// the CRDs written in a sandbox, and then writes the objects awaiting them,
// on the map built again to serve them.
func (o *writeOptions) writePlanned(ctx context.Context, w **wiring.Wiring, todo []stores.Planned, awaiting []manifest.Object, subresource string, v manifestVerb) error {
	writeWarnings(o.IO.ErrOut, todo)
	crds := &sandboxCRDs{on: (*w).Sandbox() && !o.DryRun}
	rep := newWriteReport(o, v.name, len(todo)+len(awaiting), true)
	write := func(ctx context.Context, p stores.Planned) (runtime.Object, error) {
		obj, err := p.Decode()
		if err != nil {
			return nil, err
		}
		out, err := v.write(ctx, v.options, p, obj)
		if err == nil {
			crds.add(p.Target, out)
		}
		return out, err
	}
	if err := reportEach(ctx, rep, todo, v.name, write); err != nil {
		return err
	}
	establishErr := crds.establish(ctx, *w, o.IO.ErrOut)
	if establishErr == nil && len(awaiting) > 0 && ctx.Err() == nil {
		if err := o.writeAwaiting(ctx, w, rep, awaiting, subresource, &v, write); err != nil {
			return err
		}
	}
	err := rep.finish(ctx)
	switch {
	case establishErr == nil:
		return err
	case err == nil:
		return establishErr
	}
	reportAll(o.IO.ErrOut, []error{establishErr})
	return err
}

// writeAwaiting writes the custom resources of a manifest whose CRDs this
// command established in the sandbox: it builds the map again, which now
// serves them, and checks them all first, as any manifest's objects are; a
// bad one leaves them all unwritten (the CRDs stay).
func (o *writeOptions) writeAwaiting(ctx context.Context, w **wiring.Wiring, rep *writeReport, awaiting []manifest.Object, subresource string, v *manifestVerb, write func(context.Context, stores.Planned) (runtime.Object, error)) error {
	reopened, err := (*w).Reopen(ctx, o.writeConfig())
	if err != nil {
		// Counted as not attempted.
		reportAll(o.IO.ErrOut, []error{fmt.Errorf("building the map again to serve the custom resources of the CRDs established: %w", err)})
		return nil
	}
	*w = reopened
	todo, errs := o.planErrs(ctx, reopened, awaiting, nil, subresource, v)
	if ctx.Err() != nil {
		return nil
	}
	if len(errs) > 0 {
		reportAll(o.IO.ErrOut, errs)
		rep.refused(len(awaiting))
		return nil
	}
	for _, p := range todo {
		for _, warning := range p.Warnings {
			fmt.Fprintf(o.IO.ErrOut, "Warning: %s\n", warning)
		}
	}
	return reportEach(ctx, rep, todo, v.name, write)
}

// plan checks every object of the manifest against the map, as v would
// write it; any error refuses the whole manifest, after reporting them all.
func (o *writeOptions) plan(ctx context.Context, w *wiring.Wiring, objs []manifest.Object, readErrs []error, subresource string, v *manifestVerb) ([]stores.Planned, error) {
	todo, errs := o.planErrs(ctx, w, objs, readErrs, subresource, v)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%w while checking the manifest: nothing was written", context.Cause(ctx))
	}
	if len(errs) > 0 {
		return nil, refuse(o.IO.ErrOut, errs)
	}
	return todo, nil
}

// planErrs is plan, returning the errors instead of refusing.
func (o *writeOptions) planErrs(ctx context.Context, w *wiring.Wiring, objs []manifest.Object, readErrs []error, subresource string, v *manifestVerb) ([]stores.Planned, []error) {
	v.options.Namespaces = stores.NewNamespaceCache(w.Handles["namespaces"])
	resolve := func(obj manifest.Object) (stores.Target, error) {
		return planTarget(w, obj, o.scopeOptions, subresource)
	}
	check := func(ctx context.Context, p stores.Planned, obj runtime.Object) error {
		return v.check(ctx, v.options, p, obj)
	}
	todo, errs := stores.Plan(ctx, objs, string(o.Validation), resolve, check)
	return todo, append(append(readErrs, errs...), o.checkPlaintext(ctx, w, objs, subresource)...)
}

// sandboxCRDs are the CRDs a command wrote in a sandbox, where no server
// runs the apiextensions controllers that would establish them: regctl
// runs them once the writes are done, so that the next command serves
// their custom resources.
type sandboxCRDs struct {
	on    bool
	mu    sync.Mutex
	names []string
}

// add notes out when it is a CRD written through the CRD store itself (not
// its status).
func (c *sandboxCRDs) add(t stores.Target, out runtime.Object) {
	if !c.on || t.Resource.Group != apiextensionsv1.GroupName || t.Resource.Name != "customresourcedefinitions" {
		return
	}
	m, err := meta.Accessor(out)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.names = append(c.names, m.GetName())
}

func (c *sandboxCRDs) establish(ctx context.Context, w *wiring.Wiring, errOut io.Writer) error {
	if len(c.names) == 0 {
		return nil
	}
	slices.Sort(c.names)
	if err := w.EstablishCRDs(ctx, c.names); err != nil {
		return err
	}
	p, err := render.NamePrinter("established (the sandbox runs the apiextensions controllers)")
	if err != nil {
		return err
	}
	for _, name := range c.names {
		if err := p.PrintObj(render.NameOnly(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"), "", name), errOut); err != nil {
			return err
		}
	}
	return nil
}

// writeEach runs write on every planned object, saying what became of each
// in document order (written on stdout, failed on stderr), or printing the
// results with -o as they come.
// A failure does not stop the others; it makes the exit code 1. Once the
// context is done no new write starts.
func writeEach(ctx context.Context, o *writeOptions, objs []stores.Planned, verb string, write func(context.Context, stores.Planned) (runtime.Object, error)) error {
	rep := newWriteReport(o, verb, len(objs), true)
	if err := reportEach(ctx, rep, objs, verb, write); err != nil {
		return err
	}
	return rep.finish(ctx)
}

// reportEach is writeEach on a report the caller finishes: one command's
// writes done in steps are summed up once.
func reportEach(ctx context.Context, rep *writeReport, objs []stores.Planned, verb string, write func(context.Context, stores.Planned) (runtime.Object, error)) error {
	return stores.WriteAll(ctx, objs, write, func(p stores.Planned, r stores.Written) error {
		switch {
		case !r.Started:
			// Summed up as not attempted.
			return nil
		case r.Err != nil:
			rep.fail(ctx, p.Source.Where()+" ("+plannedName(p)+")", r.Err)
			return nil
		}
		return rep.written(r.Object, writtenName(p, r.Object), verb)
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

// refuse reports every problem of a manifest and says nothing was written.
func refuse(errOut io.Writer, errs []error) error {
	reportAll(errOut, errs)
	return errors.New("nothing was written")
}
