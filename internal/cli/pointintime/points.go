// Package pointintime opens the sessions that points in time are read through
// (the sides of a diff over time, a restore's source and target) and the
// targets each side's map has of what the command names: live (the data
// the flags name, as it is now), rev:N (that etcd at N, its custom
// resources through the CRDs as they were then), rev:TIME (at the revision
// the Leases' clocks tell for the time, TellTime), a snapshot file.
package pointintime

import (
	"context"
	"fmt"
	"slices"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/regctl/regctl/internal/changes"
	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/target"
)

// Sessions opens the sessions points in time are read through (the
// sides of a diff over time, a restore's source and target): one on the
// data the flags name for live, one on it with the CRDs at N for rev:N,
// and one per snapshot file.
type Sessions struct {
	// base is the config the flags name, for every session.
	base storagemap.Config
	// args are the types named (all stored when none), scope where.
	args  []string
	scope target.Scope
	// Configure, when set, adjusts the config of a source's session.
	Configure func(changes.Source, *storagemap.Config)
	// NamespaceAlone, with no types named and one namespace, reads that
	// namespace's objects and the namespace itself, and no cluster-scoped
	// resource (a restore of a namespace).
	NamespaceAlone bool
	sessions       map[changes.Source]*storagemap.Session
	// opened are the sessions in the order they were opened: the first
	// on the flags' data may run the etcd the others read.
	opened []*storagemap.Session
	// Names are the objects named of each path (TYPE/NAME, TYPE NAME).
	Names map[string][]string
	// from are the targets of the side Pair compares from, which a
	// reopened side is paired with again (PairAgain).
	from []handle.Target
	// opens are the sources opened, by name, their times told.
	opens map[string]changes.Source
}

// New opens sessions on the data base names, for the types args name in
// scope.
func New(base storagemap.Config, args []string, scope target.Scope) *Sessions {
	return &Sessions{base: base, args: args, scope: scope, sessions: map[changes.Source]*storagemap.Session{}, Names: map[string][]string{}, opens: map[string]changes.Source{}}
}

// Open is a source's side, read at the revision it names (live: the
// revision now), and its targets.
func (d *Sessions) Open(ctx context.Context, name string) (changes.Side, []handle.Target, error) {
	src, err := d.source(ctx, name)
	if err != nil {
		return changes.Side{}, nil, err
	}
	s, err := d.session(ctx, src)
	if err != nil {
		return changes.Side{}, nil, err
	}
	side := changes.Side{Name: src.Name, Revision: src.Revision, Now: src.Revision == 0 && src.Snapshot == ""}
	client, err := s.Client(ctx)
	if err != nil {
		return side, nil, err
	}
	if side.Revision == 0 {
		side.Revision, err = etcdview.Revision(ctx, client)
	} else {
		// A compacted or future revision is one line naming the oldest
		// or the current one.
		err = etcdview.CheckRevisionOn(ctx, func(context.Context) (*clientv3.Client, error) { return client, nil }, side.Revision)
	}
	if err != nil {
		return side, nil, err
	}
	targets, err := d.targets(s.Map)
	return side, targets, err
}

// Live is the data the flags name, as it is now.
const Live = "live"

// Pair opens the sides from and to name and pairs their resources: the
// request of a comparison between them (changes.Compare), but for how it
// reads. The live side is opened first: on a sandbox, its session runs the
// etcd the other reads beside it, and it alone can be opened again
// (PairAgain).
func (d *Sessions) Pair(ctx context.Context, from, to string) (changes.Request, error) {
	var req changes.Request
	// A side that names no point in time is refused before either is
	// opened.
	for _, name := range []string{from, to} {
		if _, err := changes.ParseSource(name); err != nil {
			return req, err
		}
	}
	var toTargets []handle.Target
	first := func() (err error) {
		req.From, d.from, err = d.Open(ctx, from)
		return err
	}
	second := func() (err error) {
		req.To, toTargets, err = d.Open(ctx, to)
		return err
	}
	if to == Live {
		first, second = second, first
	}
	if err := first(); err != nil {
		return req, err
	}
	if err := second(); err != nil {
		return req, err
	}
	req.Pairs = changes.PairTargets(d.from, toTargets, d.Names)
	return req, nil
}

// PairAgain opens the side to names again (Reopen), after a command changed
// what its map serves, and pairs the side Pair compared from with it.
func (d *Sessions) PairAgain(ctx context.Context, to string) ([]changes.Pair, *storagemap.Session, error) {
	src, err := d.source(ctx, to)
	if err != nil {
		return nil, nil, err
	}
	targets, s, err := d.Reopen(ctx, src)
	if err != nil {
		return nil, nil, err
	}
	return changes.PairTargets(d.from, targets, d.Names), s, nil
}

// source is the source name names, a time told as its revision: once,
// the first time it is opened.
func (d *Sessions) source(ctx context.Context, name string) (changes.Source, error) {
	if src, ok := d.opens[name]; ok {
		return src, nil
	}
	src, err := changes.ParseSource(name)
	if err != nil || src.Time.IsZero() {
		return src, err
	}
	cfg := d.base
	if d.Configure != nil {
		// The source's own encryption config reads its Leases too.
		d.Configure(src, &cfg)
	}
	open := Open(storagemap.OpenData)
	if base := d.onData(); base != nil {
		open = base.Beside
	}
	if src.Revision, err = TellTime(ctx, cfg, src.Time, open); err != nil {
		return src, err
	}
	d.opens[name] = src
	return src, nil
}

// session is the session src is read through: its custom resources are
// those of the CRDs as they were at src.
func (d *Sessions) session(ctx context.Context, src changes.Source) (*storagemap.Session, error) {
	if s, ok := d.sessions[src]; ok {
		return s, nil
	}
	cfg := d.base
	cfg.Only = onlyOf(d.args)
	cfg.CRDRevision = src.Revision
	if d.Configure != nil {
		d.Configure(src, &cfg)
	}
	open := storagemap.OpenData
	if src.Snapshot != "" {
		cfg.Snapshot, cfg.DataDir = src.Snapshot, ""
	} else if base := d.onData(); base != nil {
		open = base.Beside
	}
	s, err := open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	d.sessions[src] = s
	d.opened = append(d.opened, s)
	return s, nil
}

// onData is the session open on the flags' data, if any.
func (d *Sessions) onData() *storagemap.Session {
	for src, s := range d.sessions {
		if src.Snapshot == "" {
			return s
		}
	}
	return nil
}

// targets are what is read in m: the types named, or every stored
// resource; in the scope's namespace, or all.
func (d *Sessions) targets(m *storagemap.Map) ([]handle.Target, error) {
	ns := ""
	if !d.scope.AllNamespaces {
		ns = d.scope.Namespace
	}
	if len(d.args) == 0 && d.NamespaceAlone && ns != "" {
		return d.namespaceTargets(m, ns), nil
	}
	if len(d.args) == 0 {
		return changes.Stored(m.Ordered(), ns), nil
	}
	refs, err := target.ParseRefs(d.args, "", false)
	if err != nil {
		return nil, err
	}
	named, err := target.Types(m, refs, d.scope)
	out := make([]handle.Target, len(named))
	for i, n := range named {
		out[i] = n.Target
		if len(n.Names) > 0 {
			d.Names[n.Path] = append(d.Names[n.Path], n.Names...)
		}
	}
	return out, err
}

// namespaceTargets are the namespace ns, and every namespaced resource
// stored in it.
func (d *Sessions) namespaceTargets(m *storagemap.Map, ns string) []handle.Target {
	var out []handle.Target
	for _, t := range changes.Stored(m.Ordered(), ns) {
		switch {
		case t.Resource.Namespaced:
			out = append(out, t)
		case t.Path == "namespaces":
			out = append(out, t)
			if !slices.Contains(d.Names[t.Path], ns) {
				d.Names[t.Path] = append(d.Names[t.Path], ns)
			}
		}
	}
	return out
}

// Reopen builds src's session again, as it was opened: on a sandbox, on
// the etcd the one before runs. The targets are those of the new map.
func (d *Sessions) Reopen(ctx context.Context, src changes.Source) ([]handle.Target, *storagemap.Session, error) {
	old, ok := d.sessions[src]
	if !ok {
		return nil, nil, fmt.Errorf("regctl bug: no session of %s to open again", src.Name)
	}
	cfg := d.base
	cfg.Only = onlyOf(d.args)
	if d.Configure != nil {
		d.Configure(src, &cfg)
	}
	var s *storagemap.Session
	var err error
	if old.Sandbox() {
		s, err = old.Reopen(ctx, cfg)
	} else {
		old.Close()
		s, err = storagemap.OpenData(ctx, cfg)
	}
	// The old session is closed either way; a failed one is closed too.
	i := slices.Index(d.opened, old)
	if err != nil {
		d.opened = slices.Delete(d.opened, i, i+1)
		delete(d.sessions, src)
		return nil, nil, err
	}
	d.opened[i], d.sessions[src] = s, s
	targets, err := d.targets(s.Map)
	return targets, s, err
}

// onlyOf is the map's Only for the types args name: TYPE/NAME names its
// TYPE.
func onlyOf(args []string) string {
	refs, err := target.ParseRefs(args, "", false)
	if err != nil || len(args) == 0 {
		return strings.Join(args, ",")
	}
	only := make([]string, len(refs))
	for i, r := range refs {
		only[i] = r.Resource
	}
	return strings.Join(only, ",")
}

// Close closes the sessions, the last opened first.
func (d *Sessions) Close() {
	for i := len(d.opened) - 1; i >= 0; i-- {
		d.opened[i].Close()
	}
}

// Session is the session src was opened on, nil when it was not.
func (d *Sessions) Session(src changes.Source) *storagemap.Session { return d.sessions[src] }
