package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/regctl/regctl/internal/completion"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/keys"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/target"
)

type keysOptions struct {
	*globalOptions
	target.Scope
	Args []string
	Keys keys.Options
}

func newKeysCmd(g *globalOptions, runF func(context.Context, *keysOptions) error) *cobra.Command {
	opts := &keysOptions{globalOptions: g}
	var output string
	cmd := &cobra.Command{
		Use:   "keys [TYPE[/NAME] [NAME...]] [-n NAMESPACE | -A] [--check]",
		Short: "Show etcd keys: usage per resource, a resource's keys, or one object's key",
		Long: `With no argument, show each path that has a store with its key prefix, number of keys and
total value size, plus the keys under the etcd prefix that no core path claims (other API
groups, allocator ranges), grouped by their next path segment. With -n, show each namespaced
resource's keys in that namespace.

With a resource, stream its keys (paged, keys only). With an object, print the exact key its
store uses (the store's own key function); this needs no etcd, unless --check asks whether
the key exists, with its revisions, version, lease and value size.

With --revision N, a resource's keys, or --check's answer, are as they were at etcd
revision N, as long as etcd has not compacted it.`,
		Example: `  # Keys and bytes per resource
  regctl keys

  # Keys and bytes per resource in one namespace
  regctl keys -n shop

  # Every pod key in one namespace
  regctl keys pods -n kube-system

  # The key of one object, and whether it exists
  regctl keys pods/web -n shop --check`,
		ValidArgsFunction: completion.ResourceObjects(g.completionFlags),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			f, err := render.ParseFormat(output, keys.Formats...)
			opts.Keys.Output, opts.Keys.Revision = f, opts.Revision
			opts.NamespaceSet = cmd.Flags().Changed("namespace")
			if err != nil {
				return err
			}
			return opts.Keys.Validate()
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runKeys(cmd.Context(), opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&output, "output", "o", string(render.Table), "Output format: table|yaml|json")
	addScopeFlags(fs, &opts.Scope)
	fs.BoolVar(&opts.Keys.Check, "check", false, "With an object: read the key from etcd and show whether it exists")
	fs.Int64Var(&opts.Keys.ChunkSize, "chunk-size", 10000, "Keys per etcd range request (keys only: etcd sends no values)")
	_ = cmd.RegisterFlagCompletionFunc("namespace", completion.Namespaces(g.completionFlags))
	_ = cmd.RegisterFlagCompletionFunc("output", completion.Formats(keys.Formats...))
	return cmd
}

func runKeys(ctx context.Context, opts *keysOptions) error {
	ref, err := keys.Parse(opts.Args, opts.Scope, opts.Keys)
	if err != nil {
		return err
	}
	if ref == nil {
		if opts.NamespaceSet && !opts.AllNamespaces {
			opts.Keys.Namespace = opts.Namespace
		}
		session, ks, err := storagemap.OpenAll(ctx, opts.sessionConfig())
		if err != nil {
			return err
		}
		defer session.Close()
		return keys.Usage(ctx, ks, opts.Keys, opts.IO.Out)
	}
	session, t, err := opts.open(ctx, *ref)
	if err != nil {
		return err
	}
	defer session.Close()
	return keys.Of(ctx, opts.IO.Out, t, ref.Names, opts.Keys)
}

// open builds the map for ref's resource and resolves it: on the user's
// etcd when the keys are read there, else on any.
func (o *keysOptions) open(ctx context.Context, ref target.Ref) (*storagemap.Session, handle.Target, error) {
	cfg := o.sessionConfig()
	cfg.MapOnly = !o.Keys.NeedsEtcd(ref.Names)
	session, named, err := storagemap.OpenTargets(ctx, cfg, []target.Ref{ref}, o.Scope, "", target.Each)
	if err != nil {
		return nil, handle.Target{}, err
	}
	return session, named[0].Target, nil
}
