// Package migratecmd is `regctl migrate`: stale values rewritten through
// their stores (migrate.Migrate).
package migratecmd

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/completion"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/migrate"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/scan"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/stores"
)

// Options are the options of `regctl migrate`.
type Options struct {
	*cli.Globals
	// Types are the resources to migrate (TYPE[,TYPE...]); all when empty.
	Types []string
	// Namespace limits namespaced resources to one; all when empty.
	Namespace string
	Output    render.Format
	Migrate   migrate.Request
	output    string
	all       bool
	// namespaceSet is -n given, which -A refuses.
	namespaceSet bool
}

// New is the `regctl migrate` command; runF, when set, runs instead of
// Options.Run (cli.WithOptions).
func New(g *cli.Globals, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Globals: g}
	cmd := &cobra.Command{
		Use:   "migrate [TYPE[,TYPE...]] [-n NAMESPACE | -A] [--encryption] [--versions] [--dry-run=server]",
		Short: "Rewrite the values scan finds stale: re-encrypt with the first key, move to the storage version",
		Long: `Choose the values a scan finds stale, at one etcd revision, and rewrite each through its
store as kube-apiserver's storage version migration does: the object is read and updated
unchanged, with its resourceVersion as precondition, so the store encodes it at the storage
version and encrypts it with the first key of --encryption-provider-config. Nothing else in
the object changes but its resourceVersion; watchers see one MODIFIED event for each.

  --encryption  values written with a key the config no longer writes with (stale-key, and
                KMS v2 values of a key ID the plugin no longer reports current), and plain
                values of a resource the config encrypts (plaintext);
  --versions    values stored at another version than the storage version (old-version).
                Once every value of a custom resource is at the storage version, the other
                versions are dropped from its CRD's status.storedVersions, as the server's
                migration runner does, unless --keep-stored-versions.

Both by default, over every resource and namespace; TYPE and -n narrow it. Beside a running
kube-apiserver, an object written since it was chosen is read again and rewritten only if it
is still stale, and a write that meets another fails on its resourceVersion and is read
again: no update is lost. --qps bounds the rewrites a second.

Values no configured key reads, or that the storage codec cannot decode, are never rewritten:
they are listed by key with why, and the exit code is 1. Nor are values a rewrite by this
release would lose part of: fields a newer kube-apiserver wrote that this release's types do
not declare, or a storage version newer than the one it writes (a value at a more mature
version is never an old-version value). They are listed apart as kept;
--drop-unknown-fields rewrites the first kind, dropping the fields. A second run does what is left, as
the values are chosen by what they are, not by a record of the first run. Ctrl-C stops
between two objects and reports what was rewritten. --dry-run reports what would be
rewritten and writes nothing. It works on --etcd-servers and --data-dir, not on --snapshot.`,
		Example: `  # After putting a new key first in the encryption config and restarting the servers
  regctl migrate secrets -n shop --encryption --encryption-provider-config=encryption.yaml

  # What would be rewritten, and why (give the config whenever values are encrypted)
  regctl migrate --dry-run=server -n shop --encryption-provider-config=encryption.yaml

  # Move config maps to their storage version; for a custom resource, this also drops the
  # versions left unused from its CRD's status.storedVersions
  regctl migrate configmaps --versions

  # For automation
  regctl migrate -n shop -o json --encryption-provider-config=encryption.yaml > migration.json`,
		ValidArgsFunction: completion.Resources(g.CompletionFlags),
		Args:              cobra.MaximumNArgs(1),
	}
	fs := cmd.Flags()
	fs.StringVarP(&opts.Namespace, "namespace", "n", "", "Migrate namespaced resources in this namespace only")
	fs.BoolVarP(&opts.all, "all-namespaces", "A", false, "Migrate every namespace (the default)")
	fs.BoolVar(&opts.Migrate.Encryption, "encryption", false, "Rewrite values written with a stale key, or in plain text where the config encrypts")
	fs.BoolVar(&opts.Migrate.Versions, "versions", false, "Rewrite values stored at another version than the storage version, and drop the versions left unused from the CRDs' status.storedVersions")
	fs.BoolVar(&opts.Migrate.KeepStoredVersions, "keep-stored-versions", false, "Leave the CRDs' status.storedVersions as they are")
	cli.AddDryRunFlag(cmd, "Report what would be rewritten, and write nothing")
	fs.Float64Var(&opts.Migrate.QPS, "qps", migrate.DefaultQPS, "Rewrites a second at most; 0 for no bound")
	fs.Int64Var(&opts.Migrate.ChunkSize, "chunk-size", scan.DefaultPageSize, "Keys read per etcd range request while choosing the values; 0 reads them all at once")
	fs.StringVarP(&opts.output, "output", "o", string(render.Table), "Output format: table|yaml|json")
	cli.AddDropUnknownFieldsFlag(fs, &opts.Migrate.DropUnknownFields)
	cli.CompleteNamespaces(cmd, g)
	_ = cmd.RegisterFlagCompletionFunc("output", completion.Formats(migrate.Formats...))
	return cli.WithOptions(cmd, opts, runF)
}

func (o *Options) Complete(cmd *cobra.Command, args []string) (err error) {
	if len(args) == 1 {
		o.Types = strings.Split(args[0], ",")
	}
	o.namespaceSet = cmd.Flags().Changed("namespace")
	if o.Output, err = render.ParseFormat(o.output, migrate.Formats...); err != nil {
		return err
	}
	if o.Migrate.DryRun, err = cli.DryRun(cmd); err != nil {
		return err
	}
	if !o.Migrate.Encryption && !o.Migrate.Versions {
		o.Migrate.Encryption, o.Migrate.Versions = true, true
	}
	return nil
}

func (o *Options) Validate() error {
	if o.all && o.namespaceSet {
		return cli.ErrNamespaceAndAll
	}
	if o.RevisionGiven() {
		return stores.ErrWriteAtRevision
	}
	if o.Migrate.QPS < 0 {
		return fmt.Errorf("--qps must not be negative, not %g", o.Migrate.QPS)
	}
	if err := stores.CheckChunkSize(o.Migrate.ChunkSize); err != nil {
		return err
	}
	return o.SessionConfig().Writable()
}

func (o *Options) Run(ctx context.Context) error {
	cfg := o.SessionConfig()
	cfg.Writes = !o.Migrate.DryRun
	if len(o.Types) > 0 {
		// Namespaces are looked up for each update, and the CRDs' status
		// path drops versions from status.storedVersions.
		cfg.Only = strings.Join(append(slices.Clone(o.Types), "namespaces", handle.CRDsPath), ",")
	}
	session, ks, err := storagemap.OpenAll(ctx, cfg)
	if err != nil {
		return err
	}
	defer session.Close()
	var named []*handle.Handle
	for _, name := range o.Types {
		h, err := session.Map.Resolve(name)
		if err != nil {
			return err
		}
		named = append(named, h)
	}
	req := o.Migrate
	req.Output = o.Output
	if req.Prefixes, err = migrate.Prefixes(ks.Handles, named, o.Namespace); err != nil {
		return err
	}
	return migrate.Migrate(ctx, ks, req, o.IO)
}
