// Package changes compares what etcd held at two points in time (two
// revisions, two snapshots, a snapshot and now), object by object, each
// read through its store at its own point, as the server would have served
// it: what was added, removed, recreated or changed, which fields changed,
// and who changed them, from metadata.managedFields. Both sides are read
// in key order, a page at a time, and merged as they come: memory stays
// flat in the number of objects.
package changes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storedvalue"
	"github.com/regctl/regctl/internal/stores"
	"github.com/regctl/regctl/internal/stores/history"
)

// Side is one point in time: a name for reports, and the revision the
// stores read at (0: now).
type Side struct {
	Name     string `json:"name"`
	Revision int64  `json:"revision"`
	// Now is set for the etcd as it is now (live): a resource kept on
	// another etcd (--etcd-servers-overrides) is read there as it is now
	// too; a revision names a point of the main etcd only.
	Now bool `json:"now,omitempty"`
}

// Pair is one resource on both sides: its target in each side's map, nil
// on a side that does not store it (a CRD added or removed between).
type Pair struct {
	Resource string
	From, To *handle.Target
	// Names, when set, are the only objects compared.
	Names []string
}

// Request is one comparison.
type Request struct {
	From, To Side
	Pairs    []Pair
	// LabelSelector selects the objects compared on both sides.
	LabelSelector string
	// ChunkSize is how many objects one read of a side takes.
	ChunkSize int64
	// Changed, when set, is given each object that differs, as served on
	// each side (nil where there is none), in key order: --patch writes
	// them out.
	Changed func(name string, from, to runtime.Object) error
	// Visit, when set, is given every object of either side, with what
	// the comparison found of it (unchanged included), resource by
	// resource, in key order: a restore acts on each. An object a side
	// could not read is listed unreadable instead.
	Visit func(Visit) error
}

// Visit is one object as a comparison found it, with each side's object
// as its store holds it (nil on a side that holds none).
type Visit struct {
	Object
	Pair     Pair
	From, To *Held
}

// Held is one side's object as its store holds it, read when asked for.
type Held struct{ s *served }

// Object is the object as its store holds it (the store's internal
// version), read through its store when it was not read yet.
func (h *Held) Object() (runtime.Object, error) {
	if h.s.internal == nil {
		obj, err := h.s.load()
		if err != nil {
			return nil, err
		}
		h.s.internal = obj
	}
	return h.s.internal, nil
}

// Target is the store the object is read through, once Object read it:
// a custom resource's is built on the first read.
func (h *Held) Target() handle.Target { return h.s.t }

// heldOf is s held, nil for none.
func heldOf(s *served) *Held {
	if s == nil {
		return nil
	}
	return &Held{s: s}
}

// Change kinds.
const (
	Added     = "added"
	Removed   = "removed"
	Changed   = "changed"
	Recreated = "recreated" // deleted and created again: another uid
	// Unchanged is said of an object only to Request.Visit.
	Unchanged = "unchanged"
)

// Report is what changed between two sides.
type Report struct {
	From      Side       `json:"from"`
	To        Side       `json:"to"`
	Resources []Resource `json:"resources"`
	// Objects are the objects that differ, resource by resource, in key
	// order.
	Objects []Object `json:"objects"`
	// Unreadable are the values a side's store could not read: each is
	// listed, and the rest compared.
	Unreadable []Unreadable `json:"unreadable,omitempty"`

	mu sync.Mutex // guards Unreadable, added to by both sides' readers
}

// Resource counts the changes of one resource.
type Resource struct {
	Resource  string `json:"resource"`
	Added     int64  `json:"added"`
	Removed   int64  `json:"removed"`
	Changed   int64  `json:"changed"`
	Recreated int64  `json:"recreated"`
	Unchanged int64  `json:"unchanged"`
	// Unreadable counts the objects one side could not read, which are
	// not compared.
	Unreadable int64 `json:"unreadable,omitempty"`
	// Storage says how the two sides store the resource differently: one
	// of them not at all (its CRD added or removed), or at another
	// version. The objects are compared as each side serves them.
	Storage string `json:"storage,omitempty"`
	// Skipped says why the resource was not compared.
	Skipped string `json:"skipped,omitempty"`
}

// Object is one object that differs.
type Object struct {
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Change    string `json:"change"`
	// Fields are the fields changed, with who last wrote each on the to
	// side; none for an object added or removed.
	Fields []Field `json:"fields,omitempty"`
}

// Field is one changed field and its writer.
type Field struct {
	Path string `json:"path"`
	// Manager, Operation and Time are the metadata.managedFields entry of
	// the to side that owns the field, or one under it: the manager that
	// wrote it, how (Apply or Update), and when that manager last wrote.
	// Empty for a field removed, which no manager owns any more.
	Manager   string `json:"manager,omitempty"`
	Operation string `json:"operation,omitempty"`
	Time      string `json:"time,omitempty"`
}

// Unreadable is a value a side could not read.
type Unreadable struct {
	Side  string `json:"side"`
	Key   string `json:"key"`
	Error string `json:"error"`
}

// Differ tells whether anything differs.
func (r *Report) Differ() bool {
	for _, res := range r.Resources {
		if res.Added+res.Removed+res.Changed+res.Recreated > 0 || res.Storage != "" {
			return true
		}
	}
	return false
}

// Compare compares every pair of req, resource by resource.
func Compare(ctx context.Context, req Request) (*Report, error) {
	r := &Report{From: req.From, To: req.To, Resources: []Resource{}, Objects: []Object{}}
	for _, p := range req.Pairs {
		res, err := compareResource(ctx, req, p, r)
		if err != nil {
			return nil, err
		}
		// A resource with no object on either side says nothing.
		if res.Added+res.Removed+res.Changed+res.Recreated+res.Unchanged+res.Unreadable > 0 || res.Storage != "" || res.Skipped != "" {
			r.Resources = append(r.Resources, res)
		}
	}
	slices.SortStableFunc(r.Unreadable, func(a, b Unreadable) int { return strings.Compare(a.Key, b.Key) })
	return r, nil
}

// unread lists one object a side could not read, and the comparison goes
// on without it. An error that says nothing of the value (an etcd that did
// not answer, a key the flags lack for every value alike) stops it.
func (r *Report) unread(ctx context.Context, side string, s *served, err error) error {
	var missing *storedvalue.KeyError
	if errors.As(err, &missing) {
		return missing // whichever object met it first
	}
	if !stores.Unreadable(ctx, err) {
		return err
	}
	key, kerr := s.t.Key(s.namespace(), s.name)
	if kerr != nil {
		key = s.key
	}
	r.addUnreadable(Unreadable{Side: side, Key: key, Error: err.Error()})
	return nil
}

func (r *Report) addUnreadable(u Unreadable) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Unreadable = append(r.Unreadable, u)
}

// served is one object of a side, as its store holds it; what the server
// would serve (ext, data) is made only for an object that differs.
type served struct {
	name string
	// uid and version tell one value from another: the object's uid and
	// resourceVersion, or (keyed) its key's create and mod revisions.
	uid, version string
	keyed        bool
	key          string // namespace/name, or name: the order of etcd's keys
	internal     runtime.Object
	// load reads internal through the store, when it was not listed.
	load func() (runtime.Object, error)
	t    handle.Target
	ext  runtime.Object
	data map[string]any
}

// external is the object as the server would serve it, and as plain data.
func (s *served) external() error {
	if s.ext != nil {
		return nil
	}
	obj, err := heldOf(s).Object()
	if err != nil {
		return fmt.Errorf("reading %s %s: %w", s.t.Path, s.key, err)
	}
	ext, err := stores.ToExternal(s.t, obj)
	if err != nil {
		return err
	}
	data, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ext)
	if err != nil {
		return err
	}
	s.ext, s.data = ext, data
	return nil
}

// compareResource merges the two sides' objects of p in key order.
func compareResource(ctx context.Context, req Request, p Pair, r *Report) (Resource, error) {
	res := Resource{Resource: p.Resource, Storage: storageChange(p)}
	fromRev, fromOK := revisionOf(p.From, req.From)
	toRev, toOK := revisionOf(p.To, req.To)
	if !fromOK || !toOK {
		res.Skipped = "kept on another etcd (--etcd-servers-overrides), where a revision of --etcd-servers names no point in time"
		return res, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	unreadable := func(side string) func(key string, err error) {
		return func(key string, err error) {
			r.addUnreadable(Unreadable{Side: side, Key: key, Error: err.Error()})
		}
	}
	from := streamOf(ctx, p.From, p.Names, req, fromRev, unreadable(req.From.Name))
	to := streamOf(ctx, p.To, p.Names, req, toRev, unreadable(req.To.Name))
	c := &comparison{ctx: ctx, req: req, p: p, res: &res, r: r}
	a, aok := <-from.items
	b, bok := <-to.items
	for aok || bok {
		switch {
		case bok && (!aok || b.key < a.key):
			if err := c.differs(nil, b, Added); err != nil {
				return res, err
			}
			b, bok = <-to.items
		case aok && (!bok || a.key < b.key):
			if err := c.differs(a, nil, Removed); err != nil {
				return res, err
			}
			a, aok = <-from.items
		default:
			if err := c.compareObject(a, b); err != nil {
				return res, err
			}
			a, aok = <-from.items
			b, bok = <-to.items
		}
	}
	// A list that reached its end with values it could not read has
	// listed each of them already.
	if err := from.wait(); !stores.WalkedToEnd(err) {
		return res, err
	}
	if err := to.wait(); !stores.WalkedToEnd(err) {
		return res, err
	}
	return res, nil
}

// comparison is the comparison of one pair's objects.
type comparison struct {
	ctx context.Context
	req Request
	p   Pair
	res *Resource
	r   *Report
}

// read is s as the server would serve it, ok false when its side could
// not read it: it is listed unreadable, and not compared.
func (c *comparison) read(side string, s *served) (ok bool, err error) {
	if err := s.external(); err != nil {
		if err := c.r.unread(c.ctx, side, s, err); err != nil {
			return false, err
		}
		c.res.Unreadable++
		return false, nil
	}
	return true, nil
}

// compareObject compares one object both sides hold. One that has the
// same uid and resourceVersion on both is the same value: etcd writes a
// key once at a revision. Most objects are, and are not decoded further.
// Keys told apart by their create revisions are read for their uids: an
// object restored (regctl restore) is the same object under a new key.
func (c *comparison) compareObject(a, b *served) error {
	if a.uid == b.uid && a.version == b.version {
		return c.unchanged(a, b)
	}
	for _, each := range []struct {
		side string
		s    *served
	}{{c.req.From.Name, a}, {c.req.To.Name, b}} {
		if a.uid == b.uid || a.keyed {
			if ok, err := c.read(each.side, each.s); !ok {
				return err
			}
		}
	}
	if a.uid != b.uid && (!a.keyed || uidOf(a.ext) != uidOf(b.ext)) {
		return c.differs(a, b, Recreated)
	}
	paths := history.ChangedPaths(a.data, b.data)
	if c.p.From != nil && c.p.To != nil && c.p.From.GroupVersion() != c.p.To.GroupVersion() {
		paths = without(paths, "apiVersion")
	}
	if len(paths) == 0 {
		return c.unchanged(a, b)
	}
	return c.differs(a, b, Changed, paths...)
}

// unchanged counts one object both sides hold alike.
func (c *comparison) unchanged(a, b *served) error {
	c.res.Unchanged++
	if c.req.Visit == nil {
		return nil
	}
	o := Object{Resource: c.res.Resource, Namespace: b.namespace(), Name: b.name, Change: Unchanged}
	return c.req.Visit(Visit{Object: o, Pair: c.p, From: heldOf(a), To: heldOf(b)})
}

// uidOf is the uid of a served object.
func uidOf(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return string(m.GetUID())
}

// differs records one object that differs, and hands it to req.Changed.
func (c *comparison) differs(a, b *served, change string, paths ...string) error {
	// An object added or removed is served only for a patch.
	var from, to runtime.Object
	for _, each := range []struct {
		side string
		s    *served
	}{{c.req.From.Name, a}, {c.req.To.Name, b}} {
		if each.s == nil || len(paths) == 0 && c.req.Changed == nil {
			continue
		}
		if ok, err := c.read(each.side, each.s); !ok {
			return err
		}
	}
	switch change {
	case Added:
		c.res.Added++
	case Removed:
		c.res.Removed++
	case Recreated:
		c.res.Recreated++
	case Changed:
		c.res.Changed++
	}
	if a != nil {
		from = a.ext
	}
	if b != nil {
		to = b.ext
	}
	either := b
	if either == nil {
		either = a
	}
	o := Object{Resource: c.res.Resource, Namespace: either.namespace(), Name: either.name, Change: change}
	if len(paths) > 0 {
		owners := managers(to)
		for _, path := range paths {
			o.Fields = append(o.Fields, owners.of(path))
		}
	}
	c.r.Objects = append(c.r.Objects, o)
	if c.req.Visit != nil {
		if err := c.req.Visit(Visit{Object: o, Pair: c.p, From: heldOf(a), To: heldOf(b)}); err != nil {
			return err
		}
	}
	if c.req.Changed == nil {
		return nil
	}
	return c.req.Changed(objectName(c.p, o), from, to)
}

func (s *served) namespace() string {
	ns, _, _ := strings.Cut(s.key, "/")
	if ns == s.key {
		return ""
	}
	return ns
}

// objectName is the name kubectl's diff gives an object's file:
// [group.]version.Kind.namespace.name.
func objectName(p Pair, o Object) string {
	t := p.To
	if t == nil {
		t = p.From
	}
	gv := t.GroupVersion()
	group := ""
	if gv.Group != "" {
		group = gv.Group + "."
	}
	return fmt.Sprintf("%s%s.%s.%s.%s", group, gv.Version, t.Route.Kind, o.Namespace, o.Name)
}

// revisionOf is the revision t is read at on side: the side's, or for a
// resource kept on another etcd, now (0) when the side is now; ok is false
// when the side names a revision of the main etcd, which is no point in
// time on the other.
func revisionOf(t *handle.Target, side Side) (rev int64, ok bool) {
	if t == nil || len(t.Route.EtcdServers) == 0 {
		return side.Revision, true
	}
	return 0, side.Now
}

// storageChange says how the two sides store p differently, if they do.
func storageChange(p Pair) string {
	switch {
	case p.From == nil:
		return "stored only on the to side (its CRD or API added)"
	case p.To == nil:
		return "stored only on the from side (its CRD or API removed)"
	case p.From.Route.StorageVersion != p.To.Route.StorageVersion:
		return fmt.Sprintf("storage version %s, then %s", p.From.Route.StorageVersion, p.To.Route.StorageVersion)
	}
	return ""
}

func without(paths []string, drop string) []string {
	out := paths[:0]
	for _, p := range paths {
		if p != drop {
			out = append(out, p)
		}
	}
	return out
}

// streamOf is one side's objects of t: its keys and their revisions,
// objects read through the store only when they differ; with a label
// selector, every object listed through the store, which selects them.
func streamOf(ctx context.Context, t *handle.Target, names []string, req Request, rev int64, onError func(string, error)) sideStream {
	if req.LabelSelector != "" {
		return stream(ctx, t, names, req, rev, onError)
	}
	return streamKeys(ctx, t, names, req, rev)
}

// sideStream is one side's objects of a resource, in key order.
type sideStream struct {
	items <-chan *served
	wait  func() error
}

// newStream runs produce on a goroutine of its own, handing what it sends
// to the stream's reader; a nil target sends nothing.
func newStream(ctx context.Context, t *handle.Target, size int64, produce func(send func(*served) error) error) sideStream {
	items := make(chan *served, 2*max(size, 1))
	if t == nil {
		close(items)
		return sideStream{items: items, wait: func() error { return nil }}
	}
	done := make(chan error, 1)
	go func() {
		defer close(items)
		done <- produce(func(s *served) error {
			select {
			case items <- s:
				return nil
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		})
	}()
	return sideStream{items: items, wait: func() error {
		// What is left unread is drained, so the producer ends.
		for range items {
		}
		return <-done
	}}
}

// stream lists t's objects at rev, page by page, in key order.
func stream(ctx context.Context, t *handle.Target, names []string, req Request, rev int64, onError func(string, error)) sideStream {
	return newStream(ctx, t, req.ChunkSize, func(send func(*served) error) error {
		// A custom resource's storage is built when it is read, as the
		// CRD handler builds it on the first request.
		h, err := t.Serving()
		if err != nil {
			return fmt.Errorf("building the storage of %s: %w", t.Path, err)
		}
		served := handle.Target{Handle: h, Namespace: t.Namespace}
		opts := stores.ListOptions{LabelSelector: req.LabelSelector, ChunkSize: req.ChunkSize, Revision: rev, OnError: onError}
		return stores.List(ctx, served, opts, func(page stores.Page) error {
			for _, item := range page.Items {
				s, err := serve(served, item)
				if err != nil {
					return err
				}
				if len(names) > 0 && !slices.Contains(names, s.name) {
					continue
				}
				if err := send(s); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// serve is item as its store holds it, keyed as etcd orders it.
func serve(t handle.Target, item runtime.Object) (*served, error) {
	m, err := meta.Accessor(item)
	if err != nil {
		return nil, err
	}
	key := m.GetName()
	if m.GetNamespace() != "" {
		key = m.GetNamespace() + "/" + key
	}
	return &served{name: m.GetName(), uid: string(m.GetUID()), version: m.GetResourceVersion(), key: key, internal: item, t: t}, nil
}
