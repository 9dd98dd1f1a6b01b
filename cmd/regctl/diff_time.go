package main

import (
	"context"
	"errors"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	kubectldiff "k8s.io/kubectl/pkg/cmd/diff"
	"k8s.io/utils/exec"

	"github.com/regctl/regctl/internal/changes"
	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/target"
)

func runDiffOverTime(ctx context.Context, o *diffOptions) error {
	sides := &diffSides{o: o, sessions: map[changes.Source]*storagemap.Session{}, names: map[string][]string{}}
	defer sides.close()
	req := changes.Request{LabelSelector: o.Selector, ChunkSize: 500}
	var from, to []handle.Target
	var err error
	if req.From, from, err = sides.open(ctx, o.From); err != nil {
		return exitTrouble(err)
	}
	if req.To, to, err = sides.open(ctx, o.To); err != nil {
		return exitTrouble(err)
	}
	req.Pairs = changes.PairTargets(from, to, sides.names)
	var patch *changes.Patch
	if o.Patch {
		if patch, err = changes.NewPatch(&kubectldiff.DiffProgram{Exec: exec.New(), IOStreams: o.IO}); err != nil {
			return exitTrouble(err)
		}
		patch.ShowSecrets = o.Diff.ShowSecrets
	}
	err = changes.Print(ctx, o.IO.Out, req, o.Output, patch)
	return diffStatus(errors.Is(err, changes.ErrDiffer), ignore(err, changes.ErrDiffer))
}

func ignore(err, target error) error {
	if errors.Is(err, target) {
		return nil
	}
	return err
}

// diffSides opens the sessions the sources of a diff over time read: one
// on the data the flags name for live, one on it with the CRDs at N for
// rev:N, and one per snapshot file.
type diffSides struct {
	o        *diffOptions
	sessions map[changes.Source]*storagemap.Session
	// opened are the sessions in the order they were opened: the first
	// on the flags' data may run the etcd the others read.
	opened []*storagemap.Session
	// names are the objects named of each path (TYPE/NAME, TYPE NAME).
	names map[string][]string
}

// open is a source's side, read at the revision it names (live: the
// revision now), and its targets.
func (d *diffSides) open(ctx context.Context, name string) (changes.Side, []handle.Target, error) {
	src, err := changes.ParseSource(name)
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

// session is the session src is read through: its custom resources are
// those of the CRDs as they were at src.
func (d *diffSides) session(ctx context.Context, src changes.Source) (*storagemap.Session, error) {
	if s, ok := d.sessions[src]; ok {
		return s, nil
	}
	cfg := d.o.sessionConfig()
	cfg.Only = strings.Join(d.o.Args, ",")
	cfg.CRDRevision = src.Revision
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
func (d *diffSides) onData() *storagemap.Session {
	for src, s := range d.sessions {
		if src.Snapshot == "" {
			return s
		}
	}
	return nil
}

// targets are what the diff compares in m: the types named, or every
// stored resource; in the namespace -n names, or all.
func (d *diffSides) targets(m *storagemap.Map) ([]handle.Target, error) {
	ns := ""
	if d.o.NamespaceSet {
		ns = d.o.Namespace
	}
	if len(d.o.Args) == 0 {
		return changes.Stored(m.Ordered(), ns), nil
	}
	refs, err := target.ParseRefs(d.o.Args, "", false)
	if err != nil {
		return nil, err
	}
	named, err := target.Types(m, refs, target.Scope{Namespace: ns, AllNamespaces: ns == "", NamespaceSet: d.o.NamespaceSet})
	out := make([]handle.Target, len(named))
	for i, n := range named {
		out[i] = n.Target
		if len(n.Names) > 0 {
			d.names[n.Path] = append(d.names[n.Path], n.Names...)
		}
	}
	return out, err
}

// close closes the sessions, the last opened first.
func (d *diffSides) close() {
	for i := len(d.opened) - 1; i >= 0; i-- {
		d.opened[i].Close()
	}
}
