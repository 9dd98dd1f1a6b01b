// Package spacecmd is `regctl space`: where etcd's space went
// (space.Space).
package spacecmd

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/completion"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/space"
	"github.com/regctl/regctl/internal/storagemap"
)

// Options are the options of `regctl space`.
type Options struct {
	*cli.Globals
	Space  space.Request
	output string
}

// New is the `regctl space` command; runF, when set, runs instead of
// Options.Run (cli.WithOptions).
func New(g *cli.Globals, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Globals: g}
	cmd := &cobra.Command{
		Use:   "space [--by namespace] [--top N] [-o table|yaml|json]",
		Short: "Show where etcd's space went: its members' database sizes, quota, alarms and history, and the resources, objects and keys that fill it",
		Long: `Show where etcd's space went, in one report:

  members      each endpoint's database size, the part of it in use, its free pages
               (what defragmenting gives back), its quota and how full it is, as
               ` + "`etcdctl endpoint status`" + ` reports them; with --snapshot, the file's own
               figures, which a member restored from it starts with;
  alarms       the alarms raised (NOSPACE: the database reached its quota, and etcd
               refuses every write but deletes);
  history      the current and compacted revisions, and the old revisions etcd holds
               since its last compaction, with the bytes of their values: what
               compacting to the current revision removes;
  resources    keys, bytes, old revisions and their bytes of each resource, by the
               map's key prefixes, most bytes first (--by namespace adds the totals of
               each namespace);
  largest      the --top N largest objects across every resource;
  hot keys     the --top N keys with the most revisions held: a key written often
               fills etcd as surely as a large value, until a compaction.

Tables show sizes in binary units (KiB, MiB, GiB); -o yaml and -o json give bytes.
Every key under --etcd-prefix is read once with its value, at one revision, and the
history since the last compaction is read with a watch, which etcd feeds 1000
revisions every 100 ms, reading the rest of the history each time: a live etcd's
history of more than --max-history revisions is not read (a snapshot's always is,
by regctl). Nothing is written: the revision and etcd's raft index are the same
after. On an etcd whose NOSPACE alarm
is raised, it works as on any other. What to do about what it shows: the runbook
"etcd out of space (NOSPACE)", docs/space.md in regctl's repository.`,
		Example: `  # Where the space went, as a table (with the server's --etcd-servers and its TLS
  # files, or --snapshot FILE for a backup)
  regctl space

  # The 20 largest objects and hottest keys, and the totals per namespace
  regctl space --top 20 --by namespace

  # In bytes, for a script or a ticket
  regctl space -o json > space.json`,
		Args: cobra.NoArgs,
	}
	fs := cmd.Flags()
	fs.StringVarP(&opts.output, "output", "o", string(render.Table), "Output format: table|yaml|json")
	fs.StringVar(&opts.Space.By, "by", "", "Add each namespace's totals: namespace")
	fs.IntVar(&opts.Space.Top, "top", space.DefaultTop, "How many of the largest objects, and of the keys with the most revisions, to list")
	fs.Int64Var(&opts.Space.ChunkSize, "chunk-size", space.DefaultPageSize, "Keys read per etcd range request; 0 reads them all at once")
	fs.Int64Var(&opts.Space.MaxHistory, "max-history", space.DefaultMaxHistory, "Read a live etcd's history only when it holds at most this many revisions since its last compaction; 0 reads it however long (etcd sends a watch 1000 revisions every 100 ms)")
	_ = cmd.RegisterFlagCompletionFunc("output", completion.Formats(space.Formats...))
	_ = cmd.RegisterFlagCompletionFunc("by", cobra.FixedCompletions([]string{space.ByNamespace}, cobra.ShellCompDirectiveNoFileComp))
	return cli.WithOptions(cmd, opts, runF)
}

func (o *Options) Complete(cmd *cobra.Command, args []string) error {
	f, err := render.ParseFormat(o.output, space.Formats...)
	o.Space.Output = f
	return err
}

func (o *Options) Validate() error {
	if o.RevisionGiven() {
		return errors.New("`--revision` is for get, keys, inspect, scan and why: space reports what etcd holds now, its history included")
	}
	return o.Space.Validate()
}

func (o *Options) Run(ctx context.Context) error {
	session, ks, err := storagemap.OpenAll(ctx, o.SessionConfig())
	if err != nil {
		return err
	}
	defer session.Close()
	return space.Space(ctx, ks, session.Snapshot, o.Space, o.IO)
}
