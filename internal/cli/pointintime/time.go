package pointintime

import (
	"context"
	"fmt"
	"time"

	"github.com/regctl/regctl/internal/clock"
	"github.com/regctl/regctl/internal/storagemap"
)

// Open opens a session: storagemap.OpenData, or a session's Beside.
type Open func(context.Context, storagemap.Config) (*storagemap.Session, error)

// TellTime tells the revision of the time t names on the data cfg names,
// by the clocks of its Leases (clock.Read), with a map of the leases store
// alone: a command that reads at a time pays for that store, not for the
// map. It says on cfg.Note which revision that is and how close the clocks
// around it are. open opens the session, closed before it returns.
func TellTime(ctx context.Context, cfg storagemap.Config, t clock.Time, open Open) (int64, error) {
	cfg.Only, cfg.CRDRevision, cfg.Leftovers, cfg.Writes = clock.LeasesPath, 0, false, false
	s, err := open(ctx, cfg)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	h, ok := s.Map.Handles[clock.LeasesPath]
	if !ok {
		return 0, fmt.Errorf("telling the revision of %s: the map serves no %s, whose Leases are the clocks (`--runtime-config`): name the revision by its number", t.Text, clock.LeasesPath)
	}
	clocks, err := clock.Read(ctx, h)
	if err != nil {
		return 0, err
	}
	told, err := clocks.Revision(t, time.Now())
	if err != nil {
		return 0, err
	}
	if cfg.Note != nil {
		cfg.Note(told.Note())
	}
	return told.Revision, nil
}
