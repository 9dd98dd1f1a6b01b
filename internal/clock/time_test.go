package clock

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/regctl/regctl/internal/stores/history"
)

// TestParseRevision reads the words a revision is given as: a number, an
// RFC 3339 time, an age.
func TestParseRevision(t *testing.T) {
	for _, tc := range []struct {
		in  string
		rev int64
		at  time.Time // the instant named, now being now
		err string
	}{
		{in: "1234", rev: 1234},
		{in: "0"},
		{in: "-3", rev: -3},
		{in: "2026-11-29T14:00:00Z", at: base},
		{in: "2026-11-29T15:00:00.5+01:00", at: base.Add(500 * time.Millisecond)},
		{in: "90m", at: now.Add(-90 * time.Minute)},
		{in: "1h30m", at: now.Add(-90 * time.Minute)},
		{in: "0s", at: now},
		{in: "-5m", err: "an age is how long ago, never negative: give a revision number, an RFC 3339 time (2026-11-29T14:00:00Z) or an age (90m)"},
		{in: "2026-11-29", err: ErrNotARevision.Error()},
		{in: "yesterday", err: ErrNotARevision.Error()},
		{in: "", err: ErrNotARevision.Error()},
	} {
		rev, at, err := ParseRevision(tc.in)
		switch {
		case tc.err != "":
			if err == nil || err.Error() != tc.err || !errors.Is(err, ErrNotARevision) {
				t.Errorf("%q: %v, want %q", tc.in, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case tc.at.IsZero() && (rev != tc.rev || !at.IsZero()):
			t.Errorf("%q: revision %d, time %q; want revision %d", tc.in, rev, at.Text, tc.rev)
		case !tc.at.IsZero() && (rev != 0 || at.Text != tc.in || !at.At(now).Equal(tc.at)):
			t.Errorf("%q: revision %d, time %q at %s; want %s", tc.in, rev, at.Text, at.At(now), tc.at)
		}
	}
}

func TestFormat(t *testing.T) {
	for in, want := range map[time.Time]string{
		base:                                 "2026-11-29T14:00:00Z",
		base.Add(123456 * time.Microsecond):  "2026-11-29T14:00:00.12Z",
		base.Add(500 * time.Millisecond):     "2026-11-29T14:00:00.5Z",
		base.In(time.FixedZone("CET", 3600)): "2026-11-29T14:00:00Z",
		base.Add(999 * time.Millisecond).Add(time.Nanosecond): "2026-11-29T14:00:00.99Z",
	} {
		if got := Format(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	next := base.Add(10 * time.Second)
	tomorrow := base.Add(24 * time.Hour)
	for _, tc := range []struct {
		after, before *time.Time
		want          string
	}{
		{&base, &next, "between 2026-11-29T14:00:00Z and 14:00:10Z"},
		{&base, &tomorrow, "between 2026-11-29T14:00:00Z and 2026-11-30T14:00:00Z"},
		{&base, nil, "after 2026-11-29T14:00:00Z"},
		{nil, &next, "before 2026-11-29T14:00:10Z"},
		{nil, nil, "<unknown>"},
	} {
		if got := Span(tc.after, tc.before); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
}

// TestAnnotate tells when each revision of an object's history was
// written: a lease renewal exactly, the object's own time when the clocks
// around agree with it, else the clocks around it.
func TestAnnotate(t *testing.T) {
	at := func(d time.Duration) *time.Time { t := base.Add(d); return &t }
	clocks := &Clocks{Oldest: 10, Current: 100, Floor: &Sample{Revision: 8, Time: base, Clock: "Lease held"}, Samples: []Sample{
		{Revision: 20, Time: *at(10 * time.Second), Clock: "Lease kube-system/a"},
		{Revision: 30, Time: *at(20*time.Second + 300*time.Millisecond), Clock: "Lease kube-system/a"},
	}}
	own := func(d time.Duration) *history.When {
		return &history.When{At: at(d), Clock: "metadata.creationTimestamp"}
	}
	h := &history.Object{Revisions: []history.Entry{
		{Revision: 10}, // the compaction: after what was held then
		{Revision: 20}, // a renewal of the lease itself
		{Revision: 25, Time: own(12 * time.Second)}, // its own time, which the clocks agree with
		{Revision: 26, Time: own(20 * time.Second)}, // whole seconds: 14:00:20 may be 14:00:20.9
		{Revision: 27, Time: own(-time.Hour)},       // a restored object's old time
		{Revision: 40},                              // after the last clock
	}}
	clocks.Annotate(h)
	want := []*history.When{
		{After: at(0), Before: at(10 * time.Second)},
		{At: at(10 * time.Second), Clock: "Lease kube-system/a"},
		own(12 * time.Second),
		own(20 * time.Second),
		{After: at(10 * time.Second), Before: at(20*time.Second + 300*time.Millisecond)},
		{After: at(20*time.Second + 300*time.Millisecond)},
	}
	for i, e := range h.Revisions {
		if !reflect.DeepEqual(e.Time, want[i]) {
			t.Errorf("revision %d: %s %+v, want %s", e.Revision, When(e.Time), e.Time, When(want[i]))
		}
	}
	if got := When(h.Revisions[2].Time); got != "2026-11-29T14:00:12Z" {
		t.Errorf("an exact time in a table: %s", got)
	}

	// With no clock at all, the object's own times are all there is.
	none := &history.Object{Revisions: []history.Entry{{Revision: 5, Time: own(-time.Hour)}, {Revision: 6}}}
	(&Clocks{Oldest: 1, Current: 6}).Annotate(none)
	if !reflect.DeepEqual(none.Revisions[0].Time, own(-time.Hour)) || none.Revisions[1].Time != nil {
		t.Errorf("no clocks: %+v", none.Revisions)
	}
}
