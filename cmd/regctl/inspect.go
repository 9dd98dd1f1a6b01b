package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/regctl/regctl/internal/completion"
	"github.com/regctl/regctl/internal/inspect"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/target"
)

type inspectOptions struct {
	*globalOptions
	target.Scope
	Args    []string
	Inspect inspect.Options
}

func newInspectCmd(g *globalOptions, runF func(context.Context, *inspectOptions) error) *cobra.Command {
	opts := &inspectOptions{globalOptions: g}
	var output string
	cmd := &cobra.Command{
		Use:   "inspect TYPE/NAME [-n NAMESPACE] [--revision N | --history] [-o table|yaml|json]",
		Short: "Show how one object is stored: key, revisions, lease, encoding, storage version, encryption",
		Long: `Show the storage view of one object: its etcd key (from the store's key function), create
and mod revisions, version, lease and the TTL left on it, the value's size, its encoding
(protobuf, JSON, YAML or CBOR), the apiVersion and kind it was stored as (the storage
version), and whether it is encrypted (provider and key name from the value's envelope,
and for KMS v2 the plugin's key ID, read without calling the plugin).
Encrypted values are decoded when --encryption-provider-config holds their key.
With --revision N, the object is shown as etcd held it at revision N.

With --history, every revision of the object etcd still holds (since its last
compaction), oldest first: the revision, whether the object was created, updated or
deleted there (a deletion is a row of its own, with no value; the first value is "oldest
held" when the compaction took its creation), the value's size, and the
fields of the served object that changed from the revision before (metadata.resourceVersion
and managedFields, which every write changes, left aside). Each revision can be read with
` + "`regctl get TYPE/NAME --revision N -o yaml`" + `, and created again from that output.
It is read with a watch of the one key from the oldest revision held, which
writes nothing.`,
		Example: `  # How a pod is stored
  regctl inspect pods/web -n shop

  # The same as data
  regctl inspect secrets/db-password -n shop -o json

  # Every revision of a config map etcd still holds, and what changed in each
  regctl inspect configmaps/app-config -n shop --history`,
		ValidArgsFunction: completion.ResourceObjects(g.completionFlags),
		Args:              cobra.RangeArgs(1, 2),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			f, err := render.ParseFormat(output, inspect.Formats...)
			opts.Inspect.Output, opts.Inspect.Revision = f, opts.Revision
			opts.NamespaceSet = cmd.Flags().Changed("namespace")
			return err
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runInspect(cmd.Context(), opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&output, "output", "o", string(render.Table), "Output format: table|yaml|json")
	addNamespaceFlag(fs, &opts.Scope)
	fs.BoolVar(&opts.Inspect.History, "history", false, "List every revision of the object etcd still holds, deletions included, and what changed in each")
	_ = cmd.RegisterFlagCompletionFunc("namespace", completion.Namespaces(g.completionFlags))
	_ = cmd.RegisterFlagCompletionFunc("output", completion.Formats(inspect.Formats...))
	return cmd
}

func runInspect(ctx context.Context, opts *inspectOptions) error {
	ctx = render.WithWarnings(ctx, opts.IO.ErrOut)
	ref, err := inspect.Parse(opts.Args, opts.Inspect)
	if err != nil {
		return err
	}
	session, t, err := opts.openLive(ctx, ref, opts.Scope, "")
	if err != nil {
		return err
	}
	defer session.Close()
	return inspect.Object(ctx, opts.IO.Out, t, ref.Names[0], opts.Inspect)
}
