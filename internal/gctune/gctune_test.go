package gctune

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestBoundHeapFollowsWhatIsLive holds the limit above what a command keeps:
// a limit under it would run the collector without end.
func TestBoundHeapFollowsWhatIsLive(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	kept := make([]byte, heapFloor)
	for i := range kept {
		kept[i] = 1
	}
	runtime.GC()
	BoundHeap()
	if limit := debug.SetMemoryLimit(-1); limit < int64(len(kept))+streamingLimit {
		t.Fatalf("limit %d MiB with %d MiB kept: want at least %d MiB", limit>>20, len(kept)>>20, (int64(len(kept))+streamingLimit)>>20)
	}
	runtime.KeepAlive(kept)
	kept = nil

	// Once what was kept is collected, the limit comes down with it, to
	// the floor.
	deadline := time.Now().Add(10 * time.Second)
	for debug.SetMemoryLimit(-1) > max(96<<20+streamingLimit, heapFloor) {
		if time.Now().After(deadline) {
			t.Fatalf("limit still %d MiB after what was kept was collected", debug.SetMemoryLimit(-1)>>20)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// TestBoundHeapHasAFloor: with little live, the bound is the floor, not a
// few MiB above what is live, where the collector would mark the storage
// map again every few MiB a list allocates.
func TestBoundHeapHasAFloor(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	runtime.GC()
	BoundHeap()
	if limit := debug.SetMemoryLimit(-1); limit != heapFloor {
		t.Fatalf("limit %d MiB with %d MiB kept, want the floor, %d MiB", limit>>20, kept()>>20, heapFloor>>20)
	}
}
