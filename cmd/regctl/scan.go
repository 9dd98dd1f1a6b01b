package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/regctl/regctl/internal/gctune"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/scan"
)

type scanOptions struct {
	*globalOptions
	Output      render.Format
	Only        []string
	FailOn      []string
	ByNamespace bool
	ChunkSize   int64
}

var scanFormats = []render.Format{render.Table, render.Wide, render.YAML, render.JSON}

func newScanCmd(g *globalOptions, runF func(context.Context, *scanOptions) error) *cobra.Command {
	opts := &scanOptions{globalOptions: g}
	var output, by string
	cmd := &cobra.Command{
		Use:   "scan [--only SECTIONS] [--fail-on KINDS] [--by namespace] [-o table|wide|yaml|json]",
		Short: "Read every key once and report sizes, encodings, encryption, storage versions, corrupt values and orphans",
		Long: `Read every key under --etcd-prefix once, through the storage map, and report for each
stored resource:

  size        keys, bytes and the largest objects;
  encoding    values by media type, beside the one the server writes now;
  encryption  values by provider and key (KMS v2: key ID); values the config would write
              with another key (stale-key), plain values of a resource the config encrypts
              (plaintext), values no configured key reads;
  versions    values by the API version they are stored at, beside the storage version,
              and for custom resources their CRD's status.storedVersions: which versions
              are in use and which can be dropped;
  corrupt     values the server cannot read as the resource's: undecryptable,
              undecodable, of another kind, whose namespace/name belong at another key,
              or holding fields their type (or a CRD's schema) does not declare;
  orphans     keys no path of the map stores (a deleted CRD's objects, removed APIs);
              the service allocators' ranges and the apiservers' endpoint leases,
              which the server keeps beside the map, are listed apart.

Each value is decrypted with the resource's transformer and decoded with its storage
codec, as the server reads it, at one etcd revision. The keys are read in pages
(--chunk-size) and looked at on every core; nothing is written. With --snapshot it
reads a backup; with --revision, the keyspace as it was.

--fail-on makes the exit code 1 when the scan finds any finding of those kinds, for CI
and cron. While it runs, progress goes to stderr when that is a terminal.`,
		Example: `  # Everything, as a table (add the server's --encryption-provider-config to read
  # encrypted values; --snapshot FILE reads a backup instead of a live etcd)
  regctl scan

  # In CI or cron: exit 1 while a value is not encrypted as the config says
  regctl scan --only encryption --fail-on encryption

  # Which versions each resource is stored at, and whether an old one can be dropped
  regctl scan --only versions -o yaml

  # Where the space goes, namespace by namespace
  regctl scan --only size --by namespace -o json > usage.json`,
		Args: cobra.NoArgs,
		PreRunE: func(cmd *cobra.Command, args []string) error {
			f, err := render.ParseFormat(output, scanFormats...)
			opts.Output = f
			if err != nil {
				return err
			}
			if err := oneOf("--only", opts.Only, scan.Sections); err != nil {
				return err
			}
			if err := oneOf("--fail-on", opts.FailOn, scan.FindingKinds); err != nil {
				return err
			}
			switch by {
			case "":
			case "namespace":
				opts.ByNamespace = true
			default:
				return fmt.Errorf("unknown --by %q: the one value is namespace", by)
			}
			if opts.ChunkSize <= 0 {
				return fmt.Errorf("--chunk-size must be positive, not %d", opts.ChunkSize)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runScan(cmd.Context(), opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&output, "output", "o", string(render.Table), "Output format: table|wide|yaml|json")
	fs.StringSliceVar(&opts.Only, "only", nil, "Report only these sections (comma-separated): "+strings.Join(scan.Sections, ","))
	fs.StringSliceVar(&opts.FailOn, "fail-on", nil, "Exit 1 when the scan finds any finding of these kinds (comma-separated): "+strings.Join(scan.FindingKinds, ","))
	fs.StringVar(&by, "by", "", "Split each resource's figures by: namespace")
	fs.Int64Var(&opts.ChunkSize, "chunk-size", scan.DefaultPageSize, "Keys read per etcd range request")
	_ = cmd.RegisterFlagCompletionFunc("output", completeFormats(scanFormats...))
	return cmd
}

// oneOf checks a list flag's values.
func oneOf(flag string, values, valid []string) error {
	for _, v := range values {
		if !slices.Contains(valid, v) {
			return fmt.Errorf("unknown %s value %q: valid values are %s", flag, v, strings.Join(valid, ","))
		}
	}
	return nil
}

func runScan(ctx context.Context, opts *scanOptions) error {
	w, err := opts.buildLive(ctx)
	if err != nil {
		return err
	}
	defer w.Close()
	if err := opts.checkRevisionOn(ctx, w.Client); err != nil {
		return err
	}
	// What is live while scanning is a few pages; the rest is garbage.
	gctune.BoundHeap()
	scanOpts := scan.Options{Sections: scan.SectionsFor(opts.Only, opts.FailOn), ByNamespace: opts.ByNamespace, PageSize: opts.ChunkSize, Revision: opts.Revision}
	main, err := w.Client(ctx)
	if err != nil {
		return err
	}
	p := newProgress(opts.IO.ErrOut)
	if p != nil {
		scanOpts.Progress = p.show
	}
	report, err := scan.Run(ctx, main, w.Map.Table.EtcdPrefix, w.Map.Ordered(), scanOpts)
	p.done()
	if err != nil {
		return err
	}
	if err := render.Print(opts.IO.Out, opts.Output, report); err != nil {
		return err
	}
	if failed := report.Failed(opts.FailOn); len(failed) > 0 {
		return fmt.Errorf("the scan found %s", strings.Join(failed, ", "))
	}
	return nil
}

// progress shows a scan's progress on a terminal, once it has taken more
// than a second, on one line rewritten in place.
type progress struct {
	w     io.Writer
	shown bool
}

func newProgress(w io.Writer) *progress {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return &progress{w: w}
}

func (p *progress) show(s scan.Progress) {
	if s.Elapsed < time.Second {
		return
	}
	p.shown = true
	fmt.Fprintf(p.w, "\r\033[K%s", progressLine(s))
}

func (p *progress) done() {
	if p != nil && p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// progressLine is "12000/150000 keys, 30.1 MiB, 8000 keys/s, 17s left".
func progressLine(s scan.Progress) string {
	rate := float64(s.Keys) / s.Elapsed.Seconds()
	line := fmt.Sprintf("%d/%d keys, %.1f MiB, %.0f keys/s", s.Keys, s.Total, float64(s.Bytes)/(1<<20), rate)
	if rate > 0 && s.Total > s.Keys {
		left := time.Duration(float64(s.Total-s.Keys)/rate) * time.Second
		line += fmt.Sprintf(", %s left", left.Round(time.Second))
	}
	return line
}
