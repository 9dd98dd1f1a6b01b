package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/target"
)

// Resolve turns refs into targets of a map: target.Each, target.Types.
type Resolve func(target.Resolver, []target.Ref, target.Scope) ([]target.Named, error)

// OpenTargets opens a session on the data cfg names, with a map of only
// what refs name and what cfg.Only names besides (the Leases whose clocks
// a history reads), and resolves refs in it with resolve. When
// verb is set, each path must serve it. With cfg.MapOnly the map may be
// built on an ephemeral etcd when cfg names none. The caller closes the
// session.
func OpenTargets(ctx context.Context, cfg storagemap.Config, refs []target.Ref, scope target.Scope, verb string, resolve Resolve) (*storagemap.Session, []target.Named, error) {
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
	open := storagemap.OpenData
	if cfg.MapOnly {
		open = storagemap.Open
	}
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
