package cli

import (
	"context"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/regctl/regctl/internal/cli/pointintime"
	"github.com/regctl/regctl/internal/clock"
	"github.com/regctl/regctl/internal/storagemap"
)

// revisionFlag is `--revision` as the command line gives it: a revision
// number into Globals.Revision, or a time into Globals.RevisionTime,
// which TellRevision makes a revision.
type revisionFlag struct{ g *Globals }

func (f revisionFlag) String() string {
	if !f.g.RevisionTime.IsZero() {
		return f.g.RevisionTime.Text
	}
	return strconv.FormatInt(f.g.Revision, 10)
}

func (f revisionFlag) Set(s string) error {
	rev, at, err := clock.ParseRevision(s)
	if err != nil {
		return err
	}
	f.g.Revision, f.g.RevisionTime = rev, at
	return nil
}

func (revisionFlag) Type() string { return "revision" }

// AddRevisionFlag binds `--revision` to g.
func (g *Globals) AddRevisionFlag(fs *pflag.FlagSet) {
	fs.Var(revisionFlag{g}, "revision", "Read (get, keys, inspect, scan, why) the keyspace as it was at etcd revision or time `N|TIME`, until etcd compacts it: "+
		"2026-11-29T14:00:00Z (RFC 3339) or 90m (ago) is the last revision the Leases' clocks show written by then, 1234 is that revision; writes refuse it")
}

// RevisionGiven tells whether `--revision` names a point in the past: a
// revision, or a time, told or not.
func (g *Globals) RevisionGiven() bool { return g.Revision != 0 || !g.RevisionTime.IsZero() }

// TellRevision makes the time `--revision` names, if any, the revision
// commands read at (Revision), once, saying on stderr which revision that
// is. It builds the leases store alone, on the data the flags name.
func (g *Globals) TellRevision(ctx context.Context) error {
	if g.RevisionTime.IsZero() || g.Revision != 0 {
		return nil
	}
	rev, err := pointintime.TellTime(ctx, g.SessionConfig(), g.RevisionTime, storagemap.OpenData)
	if err != nil {
		return err
	}
	g.Revision = rev
	return nil
}

// readsAtRevision marks the commands that read at `--revision`: a time
// given to them is told as a revision before they run (TellRevision).
// The others refuse `--revision` (RevisionGiven) or have no use for it.
const readsAtRevision = "regctl.io/reads-at-revision"

// ReadsAtRevision marks cmd as one that reads at `--revision`.
func ReadsAtRevision(cmd *cobra.Command) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[readsAtRevision] = "true"
	return cmd
}

// ReadsAt tells whether cmd reads at `--revision` (ReadsAtRevision).
func ReadsAt(cmd *cobra.Command) bool { return cmd.Annotations[readsAtRevision] == "true" }
