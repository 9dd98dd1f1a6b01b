package main

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/spf13/pflag"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/target"
)

// openOne builds the map with cfg and resolves ref, of one type, in it.
// The caller closes the map.
func openOne(ctx context.Context, cfg storagemap.Config, ref target.Ref, scope target.Scope) (*storagemap.Session, handle.Target, error) {
	session, targets, err := storagemap.OpenTargets(ctx, cfg, []target.Ref{ref}, scope, "", target.Each)
	if err != nil {
		return nil, handle.Target{}, err
	}
	return session, targets[0].Target, nil
}

// buildLive checks `-n` before building the map for create and replace.
// They take it for the objects of a manifest that name no namespace, and
// resolve no path through resolve, where the other commands have it
// checked. As a method of writeOptions it is the buildLive their manifest
// writing calls; it builds the map for the manifest's kinds with what the
// field managers of custom resources need, which reads do without.
func (o *writeOptions) buildLive(ctx context.Context, kinds []schema.GroupVersionKind) (*storagemap.Session, error) {
	if err := o.Scope.Check(); err != nil {
		return nil, err
	}
	return storagemap.OpenData(ctx, o.writeConfig(kinds))
}

// writeConfig is the map's config for a command that writes objects of
// kinds.
func (o *writeOptions) writeConfig(kinds []schema.GroupVersionKind) storagemap.Config {
	cfg := o.sessionConfig()
	cfg.FieldManagement = true
	cfg.Kinds = kinds
	cfg.Writes = !o.DryRun
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
