package render

import (
	"bytes"
	"testing"
	"time"
)

func TestProgress(t *testing.T) {
	if p := NewProgress(&bytes.Buffer{}); p != nil {
		t.Error("progress is shown on a stream that is not a terminal")
	}
	var out bytes.Buffer
	p := &Progress{w: &out, after: time.Second}
	p.Show(500*time.Millisecond, "early")
	if out.Len() != 0 {
		t.Errorf("progress shown before a second: %q", out.String())
	}
	p.Show(3*time.Second, "30000/150000 keys, "+Rate(30000, 150000, 3*time.Second))
	p.Done()
	if want := "\r\033[K30000/150000 keys, 10000/s, 12s left\r\033[K"; out.String() != want {
		t.Errorf("progress %q, want %q", out.String(), want)
	}
	// A command on no terminal has no progress, and ends without a word.
	var none *Progress
	none.Show(time.Minute, "nothing")
	none.Done()

	// A stream that stands for a terminal shows it from the start.
	out.Reset()
	p = NewProgress(Terminal{&out})
	p.Show(0, "1/2 objects")
	p.Done()
	if want := "\r\033[K1/2 objects\r\033[K"; out.String() != want {
		t.Errorf("progress on a Terminal %q, want %q", out.String(), want)
	}
}
