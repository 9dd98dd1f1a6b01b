package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spf13/pflag"

	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/stores"
	"github.com/regctl/regctl/internal/target"
)

// errNoEtcd is what a command that reads a live etcd says when none is given:
// it must not dial a default address and hang. Each way to name the data
// is one item of the list.
var errNoEtcd = errors.New("no etcd given: name the data to work on with " + strings.Join([]string{
	"`--etcd-servers` (and the TLS flags) or etcdctl's ETCDCTL_ENDPOINTS (and ETCDCTL_CACERT, ETCDCTL_CERT, ETCDCTL_KEY) for an etcd",
	"`--data-dir DIR` for a sandbox, an etcd inside regctl on DIR",
	"`--snapshot FILE` for an etcd snapshot, read-only",
}, ", or ") + "; `regctl routes` works without one")

// writable refuses a write to a snapshot, before anything is read.
func (g *globalOptions) writable() error {
	if g.Snapshot != "" {
		return fmt.Errorf("%s is an etcd snapshot, which regctl only reads: write to a live etcd (`--etcd-servers`)", g.Snapshot)
	}
	return nil
}

// buildLive builds the map against the user's etcd, refusing to run on the
// ephemeral one.
func (g *globalOptions) buildLive(ctx context.Context) (*storagemap.Session, error) {
	return g.buildLiveFor(ctx, "")
}

// buildLiveFor is buildLive for a command on the resources named in only
// (as `get` takes them): the map installs only their API versions.
func (g *globalOptions) buildLiveFor(ctx context.Context, only string) (*storagemap.Session, error) {
	if !g.etcdGiven() {
		return nil, errNoEtcd
	}
	cfg := g.sessionConfig()
	cfg.Only = only
	return storagemap.Open(ctx, cfg)
}

// etcdGiven tells whether the user named data to work on: an etcd, a
// sandbox or a snapshot.
func (g *globalOptions) etcdGiven() bool {
	return len(g.Server.Server.Etcd.StorageConfig.Transport.ServerList) > 0 || g.DataDir != "" || g.Snapshot != ""
}

// openLive builds the map on the user's etcd and resolves ref, of one
// type, in it. When verb is set, the path must serve it. The caller closes
// the map.
func (g *globalOptions) openLive(ctx context.Context, ref target.Ref, scope target.Scope, verb string) (*storagemap.Session, stores.Target, error) {
	w, targets, err := g.openLiveTypes(ctx, []target.Ref{ref}, scope, verb, target.Each)
	if err != nil {
		return nil, stores.Target{}, err
	}
	return w, targets[0].Target, nil
}

// openLiveTypes is openLive for the one or more types of refs, resolved by
// resolver.
func (g *globalOptions) openLiveTypes(ctx context.Context, refs []target.Ref, scope target.Scope, verb string, resolver func(target.Resolver, []target.Ref, target.Scope) ([]target.Named, error)) (*storagemap.Session, []target.Named, error) {
	if err := scope.Check(); err != nil {
		return nil, nil, err
	}
	only := make([]string, len(refs))
	for i, r := range refs {
		only[i] = r.Resource
	}
	w, err := g.buildLiveFor(ctx, strings.Join(only, ","))
	if err != nil {
		return nil, nil, err
	}
	targets, err := resolver(w.Map, refs, scope)
	for _, t := range targets {
		if err == nil && verb != "" && !slices.Contains(t.Resource.Verbs, verb) {
			err = fmt.Errorf("%s does not serve %s: only %s", t.Path, verb, strings.Join(t.Resource.Verbs, ", "))
		}
	}
	if err != nil {
		w.Close()
		return nil, nil, err
	}
	return w, targets, nil
}

// buildLive checks `-n` before building the map for create and replace.
// They take it for the objects of a manifest that name no namespace, and
// resolve no path through resolve, where the other commands have it
// checked. As a method of writeOptions it is the buildLive their manifest
// writing calls; it builds the map with what the field managers of custom
// resources need, which reads do without.
func (o *writeOptions) buildLive(ctx context.Context) (*storagemap.Session, error) {
	if err := o.Scope.Check(); err != nil {
		return nil, err
	}
	if !o.etcdGiven() {
		return nil, errNoEtcd
	}
	return storagemap.Open(ctx, o.writeConfig())
}

// writeConfig is the map's config for a command that writes.
func (o *writeOptions) writeConfig() storagemap.Config {
	cfg := o.sessionConfig()
	cfg.FieldManagement = true
	return cfg
}

func addScopeFlags(fs *pflag.FlagSet, s *target.Scope) {
	addNamespaceFlag(fs, s)
	fs.BoolVarP(&s.AllNamespaces, "all-namespaces", "A", false, "Across all namespaces")
	s.AllFlag = true
}

// addNamespaceFlag is `-n` alone, for commands that work in one namespace.
func addNamespaceFlag(fs *pflag.FlagSet, s *target.Scope) {
	fs.StringVarP(&s.Namespace, "namespace", "n", metav1.NamespaceDefault, "Namespace of namespaced resources")
}

// openLiveAll builds the map on the user's etcd for a command on every
// stored resource, with the client of `--etcd-servers` (dialed while the
// map was built).
func (g *globalOptions) openLiveAll(ctx context.Context) (*storagemap.Session, *clientv3.Client, error) {
	w, err := g.buildLive(ctx)
	if err != nil {
		return nil, nil, err
	}
	main, err := w.Client(ctx)
	if err != nil {
		w.Close()
		return nil, nil, err
	}
	return w, main, nil
}
