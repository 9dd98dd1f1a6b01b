package clock

import (
	"time"

	"github.com/regctl/regctl/internal/stores/history"
)

// wholeSecond is the precision of the object's own clocks
// (creationTimestamp, managedFields): the time they read is truncated to
// the second.
const wholeSecond = time.Second

// Annotate tells when each revision of an object's history was written.
// Exactly when the revision wrote a clock: a Lease renewed there (the
// object is a Lease), or a time of the object's own that
// stores.ObjectHistory read in it, as long as the Leases' clocks around
// the revision agree with it (a restored object carries the times of its
// first life, which they disown). Otherwise the revision lies between the
// clocks around it.
func (c *Clocks) Annotate(h *history.Object) {
	for i := range h.Revisions {
		e := &h.Revisions[i]
		after, before := c.Bounds(e.Revision)
		switch {
		case after != nil && after == before:
			e.Time = &history.When{At: timeOf(after), Clock: after.Clock}
		case e.Time != nil && e.Time.At != nil && agrees(*e.Time.At, after, before):
		case after == nil && before == nil:
			e.Time = nil
		default:
			e.Time = &history.When{After: timeOf(after), Before: timeOf(before)}
		}
	}
}

// agrees tells whether a time read in whole seconds can be that of a
// revision written between the clocks after and before.
func agrees(at time.Time, after, before *Sample) bool {
	return (after == nil || at.Add(wholeSecond).After(after.Time)) && (before == nil || !at.After(before.Time))
}

func timeOf(s *Sample) *time.Time {
	if s == nil {
		return nil
	}
	t := s.Time
	return &t
}

// When says in words when a revision was written, for a table.
func When(w *history.When) string {
	switch {
	case w == nil:
		return "<unknown>"
	case w.At != nil:
		return Format(*w.At)
	}
	return Span(w.After, w.Before)
}
