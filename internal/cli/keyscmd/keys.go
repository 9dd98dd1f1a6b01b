// Package keyscmd is `regctl keys`: etcd keys per resource, of a resource,
// or of one object (keys.Usage, keys.Of).
package keyscmd

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/completion"
	"github.com/regctl/regctl/internal/keys"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/target"
)

// Options are the options of `regctl keys`.
type Options struct {
	*cli.Globals
	target.Scope
	Args   []string
	Keys   keys.Options
	output string
	// ref is the object or type named, nil for usage per resource.
	ref *target.Ref
}

// New is the `regctl keys` command; runF, when set, runs instead of
// Options.Run (cli.WithOptions).
func New(g *cli.Globals, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Globals: g}
	cmd := &cobra.Command{
		Use:   "keys [TYPE[/NAME] [NAME...]] [-n NAMESPACE | -A] [--check]",
		Short: "Show etcd keys: usage per resource, a resource's keys, or one object's key",
		Long: `With no argument, show each path that has a store and holds keys with its key prefix,
number of keys and total value size, plus the keys under the etcd prefix that no path
claims (allocator ranges, a deleted CRD's objects), grouped by their next path segment.
--show-empty adds the paths that hold no keys (yaml and json always list them). With -n,
show each namespaced resource's keys in that namespace.

With a resource, stream its keys (paged, keys only). With an object, print the exact key its
store uses (the store's own key function); this needs no etcd, unless --check asks whether
the key exists, with its revisions, version, lease and value size.

With --revision N (or a time, 2026-11-29T14:00:00Z or 90m, as get takes it), a
resource's keys, or --check's answer, are as they were at etcd revision N, as long as etcd
has not compacted it.`,
		Example: `  # Keys and bytes per resource
  regctl keys

  # Keys and bytes per resource in one namespace
  regctl keys -n shop

  # Every pod key in one namespace
  regctl keys pods -n kube-system

  # The key of one object, and whether it exists
  regctl keys pods/web -n shop --check`,
		ValidArgsFunction: completion.ResourceObjects(g.CompletionFlags),
	}
	fs := cmd.Flags()
	fs.StringVarP(&opts.output, "output", "o", string(render.Table), "Output format: table|yaml|json")
	cli.AddScopeFlags(fs, &opts.Scope)
	fs.BoolVar(&opts.Keys.Check, "check", false, "With an object: read the key from etcd and show whether it exists")
	fs.BoolVar(&opts.Keys.ShowEmpty, "show-empty", false, "With no resource named: list the resources that hold no keys too (yaml and json list them all)")
	fs.Int64Var(&opts.Keys.ChunkSize, "chunk-size", 10000, "Keys per etcd range request (keys only: etcd sends no values)")
	cli.CompleteNamespaces(cmd, g)
	_ = cmd.RegisterFlagCompletionFunc("output", completion.Formats(keys.Formats...))
	return cli.WithOptions(cli.ReadsAtRevision(cmd), opts, runF)
}

func (o *Options) Complete(cmd *cobra.Command, args []string) (err error) {
	if o.Keys.Output, err = render.ParseFormat(o.output, keys.Formats...); err != nil {
		return err
	}
	o.Keys.Revision = o.Revision
	o.NamespaceSet = cmd.Flags().Changed("namespace")
	o.Args = args
	if o.NamespaceSet && !o.AllNamespaces {
		o.Keys.Namespace = o.Namespace
	}
	o.ref, err = keys.Parse(args, o.Scope, o.Keys)
	return err
}

func (o *Options) Validate() error {
	if err := o.Keys.Validate(); err != nil {
		return err
	}
	if o.Keys.ShowEmpty && len(o.Args) > 0 {
		return errors.New("`--show-empty` adds the resources that hold no keys to the usage of every resource: name no resource with it")
	}
	return nil
}

func (o *Options) Run(ctx context.Context) error {
	if o.ref == nil {
		session, ks, err := storagemap.OpenAll(ctx, o.SessionConfig())
		if err != nil {
			return err
		}
		defer session.Close()
		return keys.Usage(ctx, ks, o.Keys, o.IO.Out)
	}
	// The map alone says where keys are, on an ephemeral etcd when the
	// flags name none, unless they are read.
	open := storagemap.Open
	if o.Keys.NeedsEtcd(o.ref.Names) {
		open = storagemap.OpenData
	}
	session, t, err := cli.OpenOne(ctx, open, o.SessionConfig(), *o.ref, o.Scope)
	if err != nil {
		return err
	}
	defer session.Close()
	return keys.Of(ctx, o.IO.Out, t, o.ref.Names, o.Keys)
}
