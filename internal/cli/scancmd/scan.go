// Package scancmd is `regctl scan`: every key read once and reported on
// (scan.Scan).
package scancmd

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/completion"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/scan"
	"github.com/regctl/regctl/internal/storagemap"
)

// Options are the options of `regctl scan`.
type Options struct {
	*cli.Globals
	Scan   scan.Request
	output string
}

// New is the `regctl scan` command; runF, when set, runs instead of
// Options.Run (cli.WithOptions).
func New(g *cli.Globals, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Globals: g}
	cmd := &cobra.Command{
		Use:   "scan [--only SECTIONS] [--fail-on KINDS] [--by namespace] [-o table|wide|yaml|json]",
		Short: "Read every key once and report sizes, encodings, encryption, storage versions, corrupt values and orphans",
		Long: `Read every key under --etcd-prefix once, through the storage map, and report for each
stored resource:

  size        keys, bytes and the largest objects (for a database over its quota,
              ` + "`regctl space`" + ` adds etcd's own figures and its history);
  encoding    values by media type, beside the one the server writes now;
  encryption  values by provider and key (KMS v2: key ID); values the config would write
              with another key (stale-key), plain values of a resource the config encrypts
              (plaintext), values encrypted with a key the config lacks (key-missing) or
              whose key of that name decrypts none of them, likely not the server's
              (key-mismatch);
  versions    values by the API version they are stored at, beside the storage version,
              and for custom resources their CRD's status.storedVersions: which versions
              are in use and which can be dropped;
  corrupt     values the server cannot read as the resource's: undecryptable (by a key
              that decrypts other values), undecodable, of another kind, whose
              namespace/name belong at another key, or holding fields their type (or a
              CRD's schema) does not declare;
  orphans     keys no path of the map stores (a deleted CRD's objects, removed APIs);
              the service allocators' ranges and the apiservers' endpoint leases,
              which the server keeps beside the map, are listed apart.

Each value is decrypted with the resource's transformer and decoded with its storage
codec, as the server reads it, at one etcd revision. The keys are read in pages
(--chunk-size) and looked at on every core; nothing is written. With --snapshot it
reads a backup; with --revision, the keyspace as it was.

--fail-on makes the exit code 1 when the scan finds any finding of those kinds, for CI
and cron, or values it could not read for them: a value no key of the config decrypts may
be stale or not, and its version cannot be told, so such a gate never passes. While it
runs, progress goes to stderr when that is a terminal.`,
		Example: `  # Everything, as a table (add the server's --encryption-provider-config to read
  # encrypted values; --snapshot FILE reads a backup instead of a live etcd)
  regctl scan

  # In CI or cron: exit 1 while a value is not encrypted as the config says (or
  # cannot be read with it)
  regctl scan --only encryption --fail-on encryption --encryption-provider-config=encryption.yaml

  # Which versions each resource is stored at, and whether an old one can be dropped
  regctl scan --only versions -o yaml

  # Where the space goes, namespace by namespace (regctl space adds etcd's own
  # figures: database size, quota, alarms, history, and the keys written most)
  regctl scan --only size --by namespace -o json > usage.json`,
		Args: cobra.NoArgs,
	}
	fs := cmd.Flags()
	fs.StringVarP(&opts.output, "output", "o", string(render.Table), "Output format: table|wide|yaml|json")
	fs.StringSliceVar(&opts.Scan.Only, "only", nil, "Report only these sections (comma-separated): "+strings.Join(scan.Sections, ","))
	fs.StringSliceVar(&opts.Scan.FailOn, "fail-on", nil, "Exit 1 when the scan finds any finding of these kinds (comma-separated): "+strings.Join(scan.FindingKinds, ","))
	fs.StringVar(&opts.Scan.By, "by", "", "Split each resource's figures by: namespace")
	fs.Int64Var(&opts.Scan.ChunkSize, "chunk-size", scan.DefaultPageSize, "Keys read per etcd range request; 0 reads them all at once")
	_ = cmd.RegisterFlagCompletionFunc("output", completion.Formats(scan.Formats...))
	return cli.WithOptions(cli.ReadsAtRevision(cmd), opts, runF)
}

func (o *Options) Complete(cmd *cobra.Command, args []string) error {
	f, err := render.ParseFormat(o.output, scan.Formats...)
	o.Scan.Output, o.Scan.Revision = f, o.Revision
	return err
}

func (o *Options) Validate() error { return o.Scan.Validate() }

func (o *Options) Run(ctx context.Context) error {
	session, ks, err := storagemap.OpenAll(ctx, o.SessionConfig())
	if err != nil {
		return err
	}
	defer session.Close()
	return scan.Scan(ctx, ks, o.Scan, o.IO)
}
