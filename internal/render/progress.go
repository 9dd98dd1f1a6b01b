package render

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"
)

// Progress shows how far a long command is on a terminal, on one line
// rewritten in place, once the command has taken more than a second.
type Progress struct {
	w     io.Writer
	after time.Duration
	shown bool
}

// Terminal is a stream that stands for a terminal: progress is shown on it
// from the start, where a terminal shows it once a command has taken a
// second. A test gives one as standard error to see what a user would.
type Terminal struct{ io.Writer }

// NewProgress is the progress shown on w, nil when w is no terminal: a
// pipe or a file gets the report alone.
func NewProgress(w io.Writer) *Progress {
	switch w := w.(type) {
	case Terminal:
		return &Progress{w: w}
	case *os.File:
		if term.IsTerminal(int(w.Fd())) {
			return &Progress{w: w, after: time.Second}
		}
	}
	return nil
}

// Show shows line, once elapsed is past the progress's delay; a nil
// progress shows nothing.
func (p *Progress) Show(elapsed time.Duration, line string) {
	if p == nil || elapsed < p.after {
		return
	}
	p.shown = true
	fmt.Fprintf(p.w, "\r\033[K%s", line)
}

// Done clears the line shown, if any; a nil progress showed none.
func (p *Progress) Done() {
	if p != nil && p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// Rate is "480/s, 4s left" for done of total things in elapsed.
func Rate(done, total int64, elapsed time.Duration) string {
	rate := float64(done) / elapsed.Seconds()
	line := fmt.Sprintf("%.0f/s", rate)
	if rate > 0 && total > done {
		left := time.Duration(float64(total-done) / rate * float64(time.Second))
		line += fmt.Sprintf(", %s left", left.Round(time.Second))
	}
	return line
}

// Ticking calls fn with the time elapsed five times a second, on a
// goroutine of its own, until the returned stop, which waits for the last
// call to end.
func Ticking(fn func(elapsed time.Duration)) (stop func()) {
	start := time.Now()
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				fn(time.Since(start))
			}
		}
	}()
	return func() { close(done); <-ended }
}
