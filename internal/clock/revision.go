package clock

import (
	"fmt"
	"sort"
	"time"
)

// Told is a time told as a revision.
type Told struct {
	// Asked is the time as given, At the instant it names.
	Asked Time
	At    time.Time
	// Revision is the last revision known written at or before At: the
	// revision of Sample, the last clock that reads At or earlier.
	Revision int64
	Sample   Sample
	// Next is the first clock after it, whose time is after At; nil when
	// there is none up to Current, etcd's revision.
	Next    *Sample
	Current int64
}

// byNumber is what to do when no time can be told.
const byNumber = "name the revision by its number (`regctl inspect TYPE/NAME --history` lists an object's)"

// Revision tells the revision of the time t names, it being now: the last
// revision known written at or before it, that of the last clock reading
// that time or earlier. Revisions between that clock and the next may be
// older than t too; no clock says so. A time after now, before the oldest
// clock etcd holds (the history before its last compaction is gone), or
// with no clock at all, is an error that says which.
func (c *Clocks) Revision(t Time, now time.Time) (Told, error) {
	at := t.At(now)
	told := Told{Asked: t, At: at, Current: c.Current}
	asked := describe(t, at)
	if at.After(now) {
		return told, fmt.Errorf("%s is after now (%s): etcd holds no revision of that time yet", asked, Format(now))
	}
	if len(c.Samples) == 0 {
		return told, c.noClock()
	}
	// The samples' times never go back, so the last at or before at is
	// where the first after it starts.
	i := sort.Search(len(c.Samples), func(i int) bool { return c.Samples[i].Time.After(at) })
	if i == 0 {
		first := c.Samples[0]
		if c.Oldest > 1 {
			return told, fmt.Errorf("%s is before the oldest revision etcd can tell the time of: it compacted its history up to revision %d, and its oldest clock since, revision %d, reads %s", asked, c.Oldest, first.Revision, Format(first.Time))
		}
		return told, fmt.Errorf("%s is before the first revision etcd can tell the time of: its first clock, revision %d, reads %s", asked, first.Revision, Format(first.Time))
	}
	told.Sample = c.Samples[i-1]
	told.Revision = told.Sample.Revision
	if i < len(c.Samples) {
		told.Next = &c.Samples[i]
	}
	return told, nil
}

// noClock says why no time can be told at all.
func (c *Clocks) noClock() error {
	switch {
	case c.Unreadable > 0:
		return fmt.Errorf("no Lease could be read to tell the time of a revision by (%d values could not: %s): %s", c.Unreadable, c.Problem, byNumber)
	case c.Floor != nil:
		return fmt.Errorf("no Lease was renewed after revision %d, the oldest etcd holds, to tell the time of a revision by: %s", c.Oldest, byNumber)
	}
	return fmt.Errorf("etcd holds no Lease to tell the time of a revision by (kube-apiserver and the controllers renew theirs every few seconds): %s", byNumber)
}

// describe names the time asked: as given, and an age with the time it
// names.
func describe(t Time, at time.Time) string {
	if t.Age() {
		return fmt.Sprintf("%s ago (%s)", t.Text, Format(at))
	}
	return t.Text
}

// Note says which revision the time asked is, and how close the clocks
// around it are: the one it was told by, and the next.
func (t Told) Note() string {
	next := fmt.Sprintf("no clock after it up to the current revision %d", t.Current)
	if t.Next != nil {
		next = fmt.Sprintf("the next clock, revision %d, reads %s", t.Next.Revision, formatNear(t.Next.Time, t.At))
	}
	return fmt.Sprintf("%s is revision %d (%s renewed at %s; %s)", describe(t.Asked, t.At), t.Revision, t.Sample.Clock, formatNear(t.Sample.Time, t.At), next)
}

// Bounds are the clocks nearest rev before and after it: the times it was
// written at or after, and at or before, nil where none is known. A
// revision that is a sample is its own bounds.
func (c *Clocks) Bounds(rev int64) (after, before *Sample) {
	i := sort.Search(len(c.Samples), func(i int) bool { return c.Samples[i].Revision >= rev })
	if i < len(c.Samples) && c.Samples[i].Revision == rev {
		return &c.Samples[i], &c.Samples[i]
	}
	if i > 0 {
		after = &c.Samples[i-1]
	} else if c.Floor != nil && rev >= c.Oldest {
		after = c.Floor
	}
	if i < len(c.Samples) {
		before = &c.Samples[i]
	}
	return after, before
}
