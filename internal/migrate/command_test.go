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
