// Package restore brings objects back from an earlier point in time (a
// revision of the etcd, or a snapshot of it) exactly as they were stored:
// the same uid, creationTimestamp, ownerReferences, managedFields and
// status, written through today's stores (today's storage version and
// encryption) where their keys are free. What exists now is compared with
// the source as `diff --from` compares it, and left alone unless it is
// the same object (the same uid) and the restore is told to overwrite it.
package restore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	api "k8s.io/kubernetes/pkg/apis/core"

	"golang.org/x/sync/errgroup"

	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/regctl/regctl/internal/changes"
	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/storedvalue"
	"github.com/regctl/regctl/internal/stores"
)

// Request is one restore.
type Request struct {
	// From is the source, To the etcd restored into, as it is now.
	From, To changes.Side
	// Pairs are the resources restored, each with its target in the
	// source's map and in the live one (nil where the live map does not
	// serve it: its CRD is gone).
	Pairs []changes.Pair
	// LabelSelector selects the objects restored.
	LabelSelector string
	// ChunkSize is how many objects one read of a side takes.
	ChunkSize int64
	// DryRun runs every check a write would (the key free, the namespace
	// there, a service's cluster IPs free) and writes nothing.
	DryRun bool
	// Overwrite writes the source's object over one that differs now, when
	// it is the same object (the same uid).
	Overwrite bool
	// Namespaces is the live map's handle of namespaces; CRDs its handle
	// of CRDs, when it has one; Services and IPAddresses its handles of
	// what holds a cluster IP or a node port, when it has them, to name
	// the holder of one a service finds taken.
	Namespaces, CRDs, Services, IPAddresses *handle.Handle
	// Reopen, when set, builds the live map again once CRDs were
	// restored, and returns the request's pairs and handles on it: a CRD's
	// custom resources are served by a map built after it.
	Reopen func(context.Context) (*Request, error)
	// Timeout bounds each write, which an interrupt does not cut short:
	// a restore stops between objects.
	Timeout time.Duration
	// AllNamespaces says the namespace of each namespaced object on its
	// line.
	AllNamespaces bool
	// Selection is what the command named, as given ("-n shop",
	// "configmaps/app -n shop"), for a source that holds none of it.
	Selection string

	Out, ErrOut io.Writer
	// Output is a line per object (render.Table) or the report as JSON
	// or YAML.
	Output   render.Format
	Progress *render.Progress
}

// Results of an object.
const (
	Restored    = "restored"
	Unchanged   = "unchanged"
	Differs     = "differs"
	Overwritten = "overwritten"
	Skipped     = "skipped"
	Failed      = "failed"
)

// Object is what became of one object of the source.
type Object struct {
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
	Result    string `json:"result"`
	// Fields are the fields that differ between the source and now.
	Fields []string `json:"fields,omitempty"`
	// Reason says why an object was skipped or failed.
	Reason string `json:"reason,omitempty"`
}

// Report is what a restore did, or with DryRun would do.
type Report struct {
	From    changes.Side `json:"from"`
	To      changes.Side `json:"to"`
	DryRun  bool         `json:"dryRun,omitempty"`
	Objects []Object     `json:"objects"`
	// Interrupted says the restore stopped before its end: the objects
	// listed are all it wrote or checked.
	Interrupted bool `json:"interrupted,omitempty"`
}

// ErrLeftAlone is what a restore returns, once it has said so, when some
// object of the source was not brought back: it differs now, it was
// skipped, or its write failed.
var ErrLeftAlone = errors.New("not everything was restored")

// NothingError is what a restore returns when the source holds no object
// of what the command named: a namespace or a name mistyped, or a source
// of another time than meant.
type NothingError struct {
	Source, Selection string
}

func (e *NothingError) Error() string {
	return fmt.Sprintf("nothing to restore: %s holds nothing that matches `%s`", e.Source, e.Selection)
}

// Run restores req, and says what it did on req.Out (and req.ErrOut).
func Run(ctx context.Context, req Request) (*Report, error) {
	r := &restorer{req: req, namespaces: stores.NewNamespaceCache(req.Namespaces), served: map[string]*handle.Handle{}, sources: map[string]*handle.Handle{},
		report: &Report{From: req.From, To: req.To, DryRun: req.DryRun, Objects: []Object{}}}
	if req.Output == render.Table || req.Output == "" {
		r.lines = newLines(req.Out, req.ErrOut, req.DryRun, req.AllNamespaces)
	}
	first, rest := split(req.Pairs)
	err := r.stage(ctx, first)
	if err == nil && len(r.writtenCRDs) > 0 && req.Reopen != nil && !req.DryRun {
		var again *Request
		if again, err = req.Reopen(ctx); err == nil {
			_, rest = split(again.Pairs)
			r.req.Namespaces, r.req.CRDs = again.Namespaces, again.CRDs
			r.namespaces = stores.NewNamespaceCache(again.Namespaces)
			r.served, r.crdRefusals = map[string]*handle.Handle{}, nil
		}
	}
	if err == nil {
		err = r.stage(ctx, rest)
	}
	req.Progress.Done()
	if req.Output == render.JSON || req.Output == render.YAML {
		if perr := render.Print(req.Out, req.Output, r.report); perr != nil && err == nil {
			err = perr
		}
	}
	if err != nil {
		return r.report, err
	}
	return r.report, r.summary()
}

// firstPaths are restored before everything else: the namespaces the
// rest is created in, the CRDs that serve custom resources.
var firstPaths = []string{"namespaces", handle.CRDsPath}

// split is the pairs restored first, in firstPaths' order, and the rest.
func split(pairs []changes.Pair) (first, rest []changes.Pair) {
	for _, path := range firstPaths {
		for _, p := range pairs {
			if p.Resource == path {
				first = append(first, p)
			}
		}
	}
	for _, p := range pairs {
		if !slices.Contains(firstPaths, p.Resource) {
			rest = append(rest, p)
		}
	}
	return first, rest
}

// restorer is one restore under way.
type restorer struct {
	req        Request
	namespaces *stores.NamespaceCache
	// served and sources are the handles that serve a path live and in
	// the source, built on first use; crdRefusals why a path's objects
	// are not created, by path.
	served      map[string]*handle.Handle
	sources     map[string]*handle.Handle
	crdRefusals map[string]string
	report      *Report
	lines       *lines
	// writtenCRDs are the CRDs restored or overwritten (with DryRun, that
	// would be), by name.
	writtenCRDs map[string]bool
	// written counts the objects written, for the progress line.
	written, toWrite int
	started          time.Time
	// warned says that the writes bypass admission, once.
	warned bool
}

// entry is one object of the source with what the restore does with it.
type entry struct {
	Object
	gvk schema.GroupVersionKind
	// obj is the source's object, as its store held it, to write; live
	// the live store to write it through.
	obj  runtime.Object
	live handle.Target
	// liveUID and liveVersion are the object's now, the preconditions of
	// an overwrite.
	liveUID     types.UID
	liveVersion string
	owners      []types.UID
	// write is what restoring the object takes; nil when nothing is
	// written.
	write func(context.Context, *entry) error
	// quiet entries are said in a warning of their own, not line by line.
	quiet bool
	// from is the source's store of an object to create, key its key
	// there and under the prefix its pair reads: its value is read after
	// the comparison (readSources).
	from       handle.Target
	key, under string
}

// stage restores the objects of pairs: compares them with what is stored
// now, then writes those to write, owners first.
func (r *restorer) stage(ctx context.Context, pairs []changes.Pair) error {
	if len(pairs) == 0 {
		return nil
	}
	entries, err := r.plan(ctx, pairs)
	if err != nil {
		return err
	}
	if err := r.readSources(ctx, entries); err != nil {
		return err
	}
	if err := r.checkNamespaces(ctx, entries); err != nil {
		return err
	}
	return r.apply(ctx, ownersFirst(entries))
}

// plan compares the source's objects of pairs with those stored now.
func (r *restorer) plan(ctx context.Context, pairs []changes.Pair) ([]*entry, error) {
	var entries []*entry
	visit := func(v changes.Visit) error {
		if v.From == nil {
			return nil // only now: not the restore's
		}
		e, err := r.entryOf(ctx, v)
		if err != nil {
			return err
		}
		entries = append(entries, e)
		return nil
	}
	report, err := changes.Compare(ctx, changes.Request{From: r.req.From, To: r.req.To, Pairs: pairs,
		LabelSelector: r.req.LabelSelector, ChunkSize: r.req.ChunkSize, Visit: visit})
	if err != nil {
		return nil, err
	}
	for _, u := range report.Unreadable {
		where := "now"
		if u.Side == r.req.From.Name {
			where = "in " + u.Side
		}
		r.unreadable(u.Key, fmt.Sprintf("its value could not be read %s: %s", where, u.Error))
	}
	for _, res := range report.Resources {
		if res.Skipped != "" {
			fmt.Fprintf(r.req.ErrOut, "warning: %s not restored: %s\n", res.Resource, res.Skipped)
		}
	}
	return entries, nil
}

// unreadable reports a value a side could not read, by its key.
func (r *restorer) unreadable(key, reason string) {
	o := Object{Name: key, Result: Failed, Reason: reason}
	r.report.Objects = append(r.report.Objects, o)
	if r.lines != nil {
		r.lines.failed(key, reason)
	}
}

// entryOf is what the restore does with the object v found.
func (r *restorer) entryOf(ctx context.Context, v changes.Visit) (*entry, error) {
	pair := v.Pair
	t := pair.From
	if pair.To != nil {
		t = pair.To
	}
	e := &entry{Object: Object{Resource: v.Resource, Namespace: v.Namespace, Name: v.Name},
		gvk: t.GroupVersion().WithKind(t.Resource.Kind)}
	switch v.Change {
	case changes.Unchanged:
		e.Result = Unchanged
		return e, nil
	case changes.Recreated, changes.Changed:
		// Both sides were read to be compared.
		skipped, err := e.source(r, v.From.Object)
		if skipped || err != nil {
			return e, err
		}
		if v.Change == changes.Changed {
			return r.differs(ctx, e, v)
		}
		live, err := v.To.Object()
		if err != nil {
			return e.skip("another object of the same name is stored now"), nil
		}
		lm, _ := meta.Accessor(live)
		return e.skip("another object of the same name is stored now (uid %s): delete it to restore this one", lm.GetUID()), nil
	}
	// Stored in the source only.
	if pair.To == nil {
		if r.req.DryRun && r.writtenCRDs[crdOf(pair.From)] {
			e.Result, e.Reason = Restored, "once its CRD "+crdOf(pair.From)+" is"
			return e, nil
		}
		return e.skip("%s is not served now: restore its CRD (customresourcedefinitions/%s) first", pair.Resource, crdOf(pair.From)), nil
	}
	if why, err := r.crdRefusal(ctx, pair.To); why != "" || err != nil {
		return e.skip("%s", why), err
	}
	from, err := r.serving(r.sources, *pair.From, v.Namespace)
	if err != nil {
		return e.skip("%s", render.OneLine(err)), nil
	}
	if e.live, err = r.serving(r.served, *pair.To, v.Namespace); err != nil {
		return e.skip("%s", render.OneLine(err)), nil
	}
	// Read after the comparison, with the others of the pair, in pages.
	e.Result, e.from = Restored, from
	if e.key, err = from.Key(v.Namespace, v.Name); err == nil {
		e.under, err = pair.From.KeyPrefix(pair.From.Namespace)
	}
	return e, err
}

// read finishes e with its value in the source, kv: what writing it takes,
// or why it is not written.
func (r *restorer) read(ctx context.Context, reader *stores.ValueReader, e *entry, kv *mvccpb.KeyValue) error {
	if kv == nil {
		e.skip("it is gone from %s", r.req.From.Name)
		return nil
	}
	var loss *storedvalue.Loss
	skipped, err := e.source(r, func() (runtime.Object, error) {
		obj, l, err := reader.Read(ctx, kv)
		loss = l
		return obj, err
	})
	switch {
	case skipped || err != nil:
		return err
	case loss != nil:
		e.skip("restoring it would drop what this release cannot read: %s: use the regctl built for the release that wrote it", loss.Error())
	default:
		if m, _ := meta.Accessor(e.obj); m.GetDeletionTimestamp() != nil {
			e.skip("it was being deleted in %s", r.req.From.Name)
		} else {
			e.write = r.create
		}
	}
	return nil
}

// source reads the source's object with read: e's uid and owners. A key
// the flags lack is an error; any other failure skips e.
func (e *entry) source(r *restorer, read func() (runtime.Object, error)) (skipped bool, err error) {
	src, err := read()
	var missing *storedvalue.KeyError
	if errors.As(err, &missing) {
		// The flags' doing, alike for every value: one error.
		return true, fmt.Errorf("reading %s: %w (the source's: `--from-encryption-provider-config`)", r.req.From.Name, missing)
	}
	if err != nil {
		e.skip("its value could not be read in %s: %s", r.req.From.Name, render.OneLine(err))
		return true, nil
	}
	m, err := meta.Accessor(src)
	if err != nil {
		return true, err
	}
	e.obj, e.UID = src, string(m.GetUID())
	for _, ref := range m.GetOwnerReferences() {
		e.owners = append(e.owners, ref.UID)
	}
	return false, nil
}

// bulk is how many objects of a pair are read from the source in pages
// of its keys rather than key by key.
const bulk = 32

// readSources reads the source's values of the entries to create, side by
// side: a pair's in pages of its keys when it has many, key by key
// otherwise.
func (r *restorer) readSources(ctx context.Context, entries []*entry) error {
	byPrefix := map[string][]*entry{}
	var prefixes []string
	for _, e := range entries {
		if e.key == "" {
			continue
		}
		if _, ok := byPrefix[e.under]; !ok {
			prefixes = append(prefixes, e.under)
		}
		byPrefix[e.under] = append(byPrefix[e.under], e)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(readers)
	var walkErr error
	// gone are entries whose key a walk did not meet.
	var gone []*entry
	for _, prefix := range prefixes {
		group := byPrefix[prefix]
		reader, err := stores.NewValueReader(group[0].from)
		if err != nil {
			return err
		}
		c, err := group[0].from.Client(ctx)
		if err != nil {
			return err
		}
		rev := r.req.From.Revision
		if len(group) < bulk {
			for _, e := range group {
				g.Go(func() error {
					kv, err := etcdview.ValueAt(gctx, c, e.key, rev)
					if err != nil {
						return err
					}
					return r.read(gctx, reader, e, kv)
				})
			}
			continue
		}
		byKey := make(map[string]*entry, len(group))
		for _, e := range group {
			byKey[e.key] = e
		}
		walkErr = etcdview.PagesAt(gctx, c, prefix, prefix, rev, r.req.ChunkSize, false, func(kvs []*mvccpb.KeyValue) error {
			var found []*entry
			var values []*mvccpb.KeyValue
			for _, kv := range kvs {
				if e, ok := byKey[string(kv.Key)]; ok {
					delete(byKey, string(kv.Key))
					found, values = append(found, e), append(values, kv)
				}
			}
			g.Go(func() error {
				for i, e := range found {
					if err := r.read(gctx, reader, e, values[i]); err != nil {
						return err
					}
				}
				return nil
			})
			return nil
		})
		if walkErr != nil {
			break
		}
		gone = append(gone, slices.Collect(maps.Values(byKey))...)
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, e := range gone {
		if err := r.read(ctx, nil, e, nil); err != nil {
			return err
		}
	}
	return walkErr
}

// differs is an object stored now, the same one as the source's, with
// other content: left alone, or with Overwrite written over.
func (r *restorer) differs(ctx context.Context, e *entry, v changes.Visit) (*entry, error) {
	for _, f := range v.Fields {
		e.Fields = append(e.Fields, f.Path)
	}
	e.Result = Differs
	if !r.req.Overwrite {
		return e, nil
	}
	live, err := v.To.Object()
	if err != nil {
		return e.skip("its value could not be read now: %s", render.OneLine(err)), nil
	}
	if allocationsDiffer(e.obj, live) {
		return e.skip("its cluster IPs or node ports differ from the ones it has now, which an overwrite does not change: delete it and restore it"), nil
	}
	lm, err := meta.Accessor(live)
	if err != nil {
		return nil, err
	}
	e.liveUID, e.liveVersion = lm.GetUID(), lm.GetResourceVersion()
	e.Result = Overwritten
	src := v.From.Target()
	if e.checkSource(ctx, r, handle.Target{Handle: src.Handle, Namespace: v.Namespace}) {
		e.live = handle.Target{Handle: v.To.Target().Handle, Namespace: v.Namespace}
		e.write = r.overwrite
	}
	return e, nil
}

// checkSource refuses to write a source's value that this release would
// lose part of (fields it does not know, a newer storage version), and
// tells whether e may be written.
func (e *entry) checkSource(ctx context.Context, r *restorer, from handle.Target) bool {
	loss, err := stores.Loss(ctx, from, e.Name, r.req.From.Revision)
	switch {
	case err != nil:
		e.skip("reading its value in %s: %s", r.req.From.Name, render.OneLine(err))
	case loss != nil:
		e.skip("restoring it would drop what this release cannot read: %s: use the regctl built for the release that wrote it", loss.Error())
	}
	return err == nil && loss == nil
}

func (e *entry) skip(format string, args ...any) *entry {
	e.Result, e.Reason, e.write = Skipped, fmt.Sprintf(format, args...), nil
	return e
}

// serving is the store that serves the path of t, in namespace, built
// once and kept in built by path.
func (r *restorer) serving(built map[string]*handle.Handle, t handle.Target, namespace string) (handle.Target, error) {
	h, ok := built[t.Path]
	if !ok {
		var err error
		if h, err = t.Serving(); err != nil {
			return handle.Target{}, fmt.Errorf("building the storage of %s: %w", t.Path, err)
		}
		built[t.Path] = h
	}
	return handle.Target{Handle: h, Namespace: namespace}, nil
}

// crdRefusal says why t's CRD serves no create now, as the CRD handler
// refuses one: the CRD is being deleted. Empty for a built-in resource.
func (r *restorer) crdRefusal(ctx context.Context, t *handle.Target) (string, error) {
	if r.req.CRDs == nil {
		return "", nil
	}
	if why, ok := r.crdRefusals[t.Path]; ok {
		return why, nil
	}
	why := ""
	obj, err := stores.GetInternal(ctx, handle.Target{Handle: r.req.CRDs}, crdOf(t))
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return "", fmt.Errorf("reading the CRD of %s: %w", t.Path, err)
	default:
		if m, err := meta.Accessor(obj); err == nil && m.GetDeletionTimestamp() != nil {
			why = fmt.Sprintf("its CRD %s is being deleted: restore again once it is gone", crdOf(t))
		}
	}
	if r.crdRefusals == nil {
		r.crdRefusals = map[string]string{}
	}
	r.crdRefusals[t.Path] = why
	return why, nil
}

// crdOf is the name of the CRD that serves the custom resources of t.
func crdOf(t *handle.Target) string {
	return t.Route.Resource + "." + t.Route.Group
}

// checkNamespaces skips, with one warning each, what would be written
// into a namespace that is gone and not restored, or terminating: the
// server's NamespaceLifecycle admission refuses it.
func (r *restorer) checkNamespaces(ctx context.Context, entries []*entry) error {
	why := map[string]string{}
	count := map[string]int{}
	var order []string
	for _, e := range entries {
		if e.write == nil || e.Namespace == "" {
			continue
		}
		reason, seen := why[e.Namespace]
		if !seen {
			ns, err := r.namespaces.Namespace(ctx, e.Namespace)
			if err != nil {
				return fmt.Errorf("reading namespace %s: %w", e.Namespace, err)
			}
			switch {
			case ns == nil:
				reason = fmt.Sprintf("namespace %s does not exist: restore it too (namespaces/%s)", e.Namespace, e.Namespace)
			case ns.Status.Phase == api.NamespaceTerminating || ns.DeletionTimestamp != nil:
				reason = fmt.Sprintf("namespace %s is terminating: restore again once it is gone", e.Namespace)
			}
			why[e.Namespace] = reason
			order = append(order, e.Namespace)
		}
		if reason != "" {
			e.skip("%s", reason).quiet = true
			count[e.Namespace]++
		}
	}
	for _, ns := range order {
		if n := count[ns]; n > 0 {
			fmt.Fprintf(r.req.ErrOut, "warning: %d %s not restored: %s\n", n, render.Plural(n, "object", "objects"), why[ns])
		}
	}
	return nil
}

// allocationsDiffer tells whether src, a service, holds other cluster IPs
// or node ports than live.
func allocationsDiffer(src, live runtime.Object) bool {
	a, ok := src.(*api.Service)
	b, _ := live.(*api.Service)
	if !ok || b == nil {
		return false
	}
	if strings.Join(a.Spec.ClusterIPs, ",") != strings.Join(b.Spec.ClusterIPs, ",") || a.Spec.HealthCheckNodePort != b.Spec.HealthCheckNodePort {
		return true
	}
	ports := func(s *api.Service) []int32 {
		var out []int32
		for _, p := range s.Spec.Ports {
			out = append(out, p.NodePort)
		}
		return out
	}
	return fmt.Sprint(ports(a)) != fmt.Sprint(ports(b))
}
