package scan

import (
	"context"
	"fmt"
	"slices"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/gctune"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/stores"
)

// Formats are the output formats a scan's report prints in.
var Formats = []render.Format{render.Table, render.Wide, render.YAML, render.JSON}

// Request is one `regctl scan`: what to look at, at which revision, how
// to print the report, and which findings fail it.
type Request struct {
	Output render.Format
	// Only are the sections to report (--only), every one when empty.
	Only []string
	// FailOn are the kinds of finding that make the scan an error
	// (--fail-on).
	FailOn []string
	// By splits each resource's figures: "namespace", or "" for none.
	By string
	// ChunkSize is how many keys one etcd range request reads; 0 reads
	// every key in one request, as kubectl's --chunk-size=0.
	ChunkSize int64
	// Revision is the etcd revision to read at; 0 is now.
	Revision int64
}

// Validate checks the request's flags; it needs no etcd.
func (r Request) Validate() error {
	if err := oneOf("--only", r.Only, Sections); err != nil {
		return err
	}
	if err := oneOf("--fail-on", r.FailOn, FindingKinds); err != nil {
		return err
	}
	if r.By != "" && r.By != "namespace" {
		return fmt.Errorf("unknown --by %q: the one value is namespace", r.By)
	}
	return stores.CheckChunkSize(r.ChunkSize)
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

// Scan runs the scan r asks for (Run) on ks; prints the report on the
// streams' Out; and fails when it found findings of a kind r.FailOn names.
// While it runs, progress goes to ErrOut when that is a terminal.
func Scan(ctx context.Context, ks handle.Keyspace, r Request, streams genericiooptions.IOStreams) error {
	out, errOut := streams.Out, streams.ErrOut
	if err := etcdview.CheckRevisionOn(ctx, func(context.Context) (*clientv3.Client, error) { return ks.Client, nil }, r.Revision); err != nil {
		return err
	}
	// What is live while scanning is a few pages; the rest is garbage.
	gctune.BoundHeap()
	opts := Options{Sections: SectionsFor(r.Only, r.FailOn), ByNamespace: r.By == "namespace", PageSize: PageSize(r.ChunkSize), Revision: r.Revision}
	p := render.NewProgress(errOut)
	if p != nil {
		opts.Progress = func(s Progress) { p.Show(s.Elapsed, progressLine(s)) }
	}
	report, err := Run(ctx, ks, opts)
	p.Done()
	if err != nil {
		return err
	}
	// A snapshot answers no alarms: it has none.
	report.Alarms, _ = etcdview.Alarms(ctx, ks.Client)
	if err := render.Print(out, r.Output, report); err != nil {
		return err
	}
	if failed := report.Failed(r.FailOn); len(failed) > 0 {
		return fmt.Errorf("the scan found %s", strings.Join(failed, ", "))
	}
	return nil
}

// progressLine is "12000/150000 keys, 30.1 MiB, 10000 keys/s, 17s left".
func progressLine(s Progress) string {
	return fmt.Sprintf("%d/%d keys, %.1f MiB, %s", s.Keys, s.Total, float64(s.Bytes)/(1<<20), render.Rate(s.Keys, s.Total, s.Elapsed))
}
