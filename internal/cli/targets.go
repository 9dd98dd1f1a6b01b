package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/target"
)

// Resolve turns refs into targets of a map: target.Each, target.Types.
type Resolve func(target.Resolver, []target.Ref, target.Scope) ([]target.Named, error)

// Open opens a session with a config: storagemap.OpenData for a command
// on data, which refuses to build the map when the flags name no etcd, or
// storagemap.Open for one that needs only the map, which builds it on an
// ephemeral etcd then (keys printing where an object would be stored).
// Which one is the command's decision, made where it is called.
type Open func(context.Context, storagemap.Config) (*storagemap.Session, error)

// OpenTargets opens a session with open on the data cfg names, with a map
// of only what refs name and what cfg.Only names besides (the Leases whose
// clocks a history reads), and resolves refs in it with resolve. When verb
// is set, each path must serve it. The caller closes the session.
func OpenTargets(ctx context.Context, open Open, cfg storagemap.Config, refs []target.Ref, scope target.Scope, verb string, resolve Resolve) (*storagemap.Session, []target.Named, error) {
	if err := scope.Check(); err != nil {
		return nil, nil, err
	}
	only := make([]string, len(refs))
	for i, r := range refs {
		only[i] = r.Resource
	}
	if cfg.Only != "" {
		only = append(only, cfg.Only)
	}
	cfg.Only = strings.Join(only, ",")
	s, err := open(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	targets, err := resolve(s.Map, refs, scope)
	for _, t := range targets {
		if err == nil && verb != "" && !slices.Contains(t.Resource.Verbs, verb) {
			err = fmt.Errorf("%s does not serve %s: only %s", t.Path, verb, strings.Join(t.Resource.Verbs, ", "))
		}
	}
	if err != nil {
		s.Close()
		return nil, nil, err
	}
	return s, targets, nil
}

// OpenOne opens a session with open and cfg and resolves ref, of one type,
// in its map. The caller closes the session.
func OpenOne(ctx context.Context, open Open, cfg storagemap.Config, ref target.Ref, scope target.Scope) (*storagemap.Session, handle.Target, error) {
	session, targets, err := OpenTargets(ctx, open, cfg, []target.Ref{ref}, scope, "", target.Each)
	if err != nil {
		return nil, handle.Target{}, err
	}
	return session, targets[0].Target, nil
}
