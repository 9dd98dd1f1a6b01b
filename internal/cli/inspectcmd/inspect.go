// Package inspectcmd is `regctl inspect`: one object's key, value and
// history in etcd (inspect.Object).
package inspectcmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/clock"
	"github.com/regctl/regctl/internal/completion"
	"github.com/regctl/regctl/internal/inspect"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/target"
)

// Options are the options of `regctl inspect`.
type Options struct {
	*cli.Globals
	target.Scope
	Args    []string
	Inspect inspect.Options
	output  string
	ref     target.Ref
}

// New is the `regctl inspect` command; runF, when set, runs instead of
// Options.Run (cli.WithOptions).
func New(g *cli.Globals, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Globals: g}
	cmd := &cobra.Command{
		Use:   "inspect TYPE/NAME [-n NAMESPACE] [--revision N|TIME | --history] [-o table|yaml|json]",
		Short: "Show how one object is stored: key, revisions, lease, encoding, storage version, encryption",
		Long: `Show the storage view of one object: its etcd key (from the store's key function), create
and mod revisions, version, lease and the TTL left on it, the value's size, its encoding
(protobuf, JSON, YAML or CBOR), the apiVersion and kind it was stored as (the storage
version), and whether it is encrypted (provider and key name from the value's envelope,
and for KMS v2 the plugin's key ID, read without calling the plugin).
Encrypted values are decoded when --encryption-provider-config holds their key.
With --revision N, the object is shown as etcd held it at revision N (or at a time, as get
takes it).

With --history, every revision of the object etcd still holds (since its last
compaction), oldest first: the revision, whether the object was created, updated or
deleted there (a deletion is a row of its own, with no value; the first value is "oldest
held" when the compaction took its creation), when it was written, the value's size, and the
fields of the served object that changed from the revision before (metadata.resourceVersion
and managedFields, which every write changes, left aside). Each revision can be read with
` + "`regctl get TYPE/NAME --revision N -o yaml`" + `, and created again from that output.
It is read with a watch of the one key from the oldest revision held, which
writes nothing.

A revision's TIME is exact where the revision wrote one: the object's creationTimestamp
where it was created, the managedFields entry an update made newer (both whole seconds),
a Lease's renewTime; otherwise it lies between the clocks of the revisions around it, which
are the renewals of the Leases kube-apiserver and the controllers hold (every few seconds),
read with one more watch of the leases' keys. In yaml and json, time.at (and time.clock,
what told it) or time.after and time.before.`,
		Example: `  # How a pod is stored
  regctl inspect pods/web -n shop

  # The same as data
  regctl inspect secrets/db-password -n shop -o json

  # Every revision of a config map etcd still holds, and what changed in each
  regctl inspect configmaps/app-config -n shop --history`,
		ValidArgsFunction: completion.ResourceObjects(g.CompletionFlags),
		Args:              cobra.RangeArgs(1, 2),
	}
	fs := cmd.Flags()
	fs.StringVarP(&opts.output, "output", "o", string(render.Table), "Output format: table|yaml|json")
	cli.AddNamespaceFlag(fs, &opts.Scope)
	fs.BoolVar(&opts.Inspect.History, "history", false, "List every revision of the object etcd still holds, deletions included, and what changed in each")
	cli.CompleteNamespaces(cmd, g)
	_ = cmd.RegisterFlagCompletionFunc("output", completion.Formats(inspect.Formats...))
	return cli.WithOptions(cli.ReadsAtRevision(cmd), opts, runF)
}

func (o *Options) Complete(cmd *cobra.Command, args []string) (err error) {
	if o.Inspect.Output, err = render.ParseFormat(o.output, inspect.Formats...); err != nil {
		return err
	}
	o.Inspect.Revision = o.Revision
	o.NamespaceSet = cmd.Flags().Changed("namespace")
	o.Args = args
	o.ref, err = inspect.Parse(args, o.Inspect)
	return err
}

// Validate has nothing left to check: inspect.Parse checked the object
// named and the flags it goes with.
func (o *Options) Validate() error { return nil }

func (o *Options) Run(ctx context.Context) error {
	ctx = render.WithWarnings(ctx, o.IO.ErrOut)
	cfg := o.SessionConfig()
	// The objects of a CRD that is gone are read through one made up
	// from them.
	cfg.Leftovers = true
	if o.Inspect.History {
		// The Leases' clocks tell when each revision was written.
		cfg.Only = clock.LeasesPath
	}
	session, t, err := cli.OpenOne(ctx, storagemap.OpenData, cfg, o.ref, o.Scope)
	if err != nil {
		return err
	}
	defer session.Close()
	if o.Inspect.History {
		o.Inspect.Clocks = session.Map.Handles[clock.LeasesPath]
	}
	return inspect.Object(ctx, o.IO.Out, t, o.ref.Names[0], o.Inspect)
}
