package migrate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/regctl/regctl/internal/gctune"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/render"
)

// Formats are the output formats a migration's report prints in.
var Formats = []render.Format{render.Table, render.YAML, render.JSON}

// DefaultQPS is how many values a migration rewrites a second unless told
// otherwise. Each rewrite is one read and one conditional write of the
// object in etcd. The documented rotation through the server, kubectl get
// | kubectl replace, writes as fast as one client gets through
// kube-apiserver: a few hundred objects a second (`go run ./bench
// migrate`). regctl needs no server, so only this bound keeps it from
// writing as fast as etcd commits. At 2,000 a second a rotation of 20,000
// Secrets of 2 KiB takes 10 seconds and writes about 4 MiB of values a
// second, which etcd commits in batches well within what its hardware
// guidance sizes a disk for, leaving room for the cluster's own writes.
const DefaultQPS = 2000

// ErrNotDone is what a migration that left values to rewrite fails with,
// once its report is printed; the error says what to do about each kind.
var ErrNotDone = errors.New("some values were not rewritten (see the report)")

// notDone is ErrNotDone, with what to do about the values left.
func (r *Report) notDone() error {
	var todo []string
	if len(r.Unreadable) > 0 {
		todo = append(todo, "see why it cannot read the values it left as they are (`regctl inspect` shows each)")
	}
	if len(r.Kept) > 0 {
		todo = append(todo, "rewrite the values a newer kube-apiserver wrote with the regctl built for its release")
	}
	if len(r.Failed) > 0 {
		todo = append(todo, "see why the store refused the rest")
	}
	return fmt.Errorf("%w: %s, then run the migration again", ErrNotDone, strings.Join(todo, "; "))
}

// Migrate runs the migration req asks for (Run) on ks; prints the report
// on the streams' Out, interrupted or not; and fails when values were left
// to rewrite. While it runs, progress goes to ErrOut when that is a
// terminal.
func Migrate(ctx context.Context, ks handle.Keyspace, req Request, streams genericiooptions.IOStreams) error {
	out, errOut, output := streams.Out, streams.ErrOut, req.Output
	// What is live while the values are chosen is a few pages.
	gctune.BoundHeap()
	p := render.NewProgress(errOut)
	if p != nil {
		req.Progress = func(s Progress) { p.Show(s.Elapsed, progressLine(s)) }
	}
	report, err := Run(ctx, ks, req)
	p.Done()
	if report != nil {
		if perr := render.Print(out, output, report); perr != nil && err == nil {
			err = perr
		}
	}
	if err != nil {
		return err
	}
	if report.NotDone() {
		return report.notDone()
	}
	return nil
}

// progressLine is "secrets 1200/3000, 1200/3050 values in all, 480/s, 4s
// left".
func progressLine(s Progress) string {
	return fmt.Sprintf("%s %d/%d, %d/%d values in all, %s", s.Resource, s.ResourceDone, s.ResourceAll, s.Done, s.Total, render.Rate(s.Done, s.Total, s.Elapsed))
}
