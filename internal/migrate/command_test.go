package migrate

import (
	"testing"
	"time"
)

func TestProgressLine(t *testing.T) {
	got := progressLine(Progress{Resource: "secrets", ResourceDone: 1200, ResourceAll: 3000, Done: 1200, Total: 3050, Elapsed: 3 * time.Second})
	if want := "secrets 1200/3000, 1200/3050 values in all, 400/s, 5s left"; got != want {
		t.Errorf("progress %q, want %q", got, want)
	}
}

// A short migration at the default rate waits for nothing: a thousand
// rewrites go at once; the next second's wait for their share.
func TestTheRateLetsAShortMigrationGoAtOnce(t *testing.T) {
	l := limiter(DefaultQPS)
	now := time.Now()
	if d := l.ReserveN(now, 1000).DelayFrom(now); d != 0 {
		t.Errorf("1,000 rewrites at --qps=%d wait %s", DefaultQPS, d)
	}
	if d := l.ReserveN(now, DefaultQPS).DelayFrom(now); d < 400*time.Millisecond {
		t.Errorf("another %d at once wait only %s", DefaultQPS, d)
	}
	if limiter(0) != nil {
		t.Error("--qps=0 is bounded")
	}
}
