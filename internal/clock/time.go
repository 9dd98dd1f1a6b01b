// Package clock tells the time of etcd revisions. etcd records none, but
// the keyspace holds clocks: the Leases that kube-apiserver (its identity
// lease), the controllers and schedulers (their leader elections) and the
// kubelets renew every few seconds, each renewal a revision written with
// the holder's time in spec.renewTime. Read takes the history etcd holds
// of every Lease, through the leases store's handle (its codec and
// transformer), and keeps one (revision, time) sample per renewal; a time
// of day is then the last revision known written at or before it
// (Clocks.Revision), and any revision lies between the samples around it
// (Clocks.Bounds). The command line names a time as an RFC 3339 time or an
// age (ParseRevision).
package clock

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Time is a time as the command line gives it where a revision is taken:
// an RFC 3339 time (2026-11-29T14:00:00Z) or an age before now (90m). The
// zero Time is none.
type Time struct {
	// Text is the time as given.
	Text string
	at   time.Time
	age  time.Duration
}

// IsZero tells whether t names no time.
func (t Time) IsZero() bool { return t.Text == "" }

// At is the instant t names, an age counted back from now.
func (t Time) At(now time.Time) time.Time {
	if t.at.IsZero() {
		return now.Add(-t.age)
	}
	return t.at
}

// Age tells whether t is an age, counted back from now.
func (t Time) Age() bool { return !t.IsZero() && t.at.IsZero() }

// ErrNotARevision is what ParseRevision says of a word that names no
// revision; the caller says where it was given.
var ErrNotARevision = errors.New("give a revision number, an RFC 3339 time (2026-11-29T14:00:00Z) or an age (90m)")

// ParseRevision reads a revision as the command line gives it: an etcd
// revision number, returned as it is (the caller checks its range), or a
// time, returned to be told (Clocks.Revision). An age is how long ago, so
// it is not negative.
func ParseRevision(s string) (int64, Time, error) {
	if rev, err := strconv.ParseInt(s, 10, 64); err == nil {
		return rev, Time{}, nil
	}
	if at, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return 0, Time{Text: s, at: at}, nil
	}
	age, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, Time{}, ErrNotARevision
	case age < 0:
		return 0, Time{}, fmt.Errorf("an age is how long ago, never negative: %w", ErrNotARevision)
	}
	return 0, Time{Text: s, age: age}, nil
}

// Format writes a clock's time for people: in UTC, RFC 3339 to the
// hundredth of a second (leases' clocks have microseconds, which no
// operator reads; managedFields' whole seconds show as such).
func Format(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.99Z07:00")
}

// formatNear is Format without the date when it is the day of ref: the
// clocks a note names beside the time asked.
func formatNear(t, ref time.Time) string {
	t, ref = t.UTC(), ref.UTC()
	if t.YearDay() == ref.YearDay() && t.Year() == ref.Year() {
		return t.Format("15:04:05.99Z07:00")
	}
	return Format(t)
}

// Span says what a revision's time is known to lie between, in words: the
// time of the clock before it and of the one after it, either of which
// may be unknown.
func Span(after, before *time.Time) string {
	switch {
	case after != nil && before != nil:
		return "between " + Format(*after) + " and " + formatNear(*before, *after)
	case after != nil:
		return "after " + Format(*after)
	case before != nil:
		return "before " + Format(*before)
	}
	return "<unknown>"
}
