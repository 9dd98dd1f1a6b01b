// Package gctune is regctl's garbage collector policy. Its initialiser sets
// the start-up pacing as early as a Go program can, commands call Steady and
// BoundHeap when their own work begins, and what keeps memory beside a
// command's work (a snapshot's index) reserves it.
//
// A run of regctl is short, and it allocates most of what it ever will
// while the server's packages initialise and the storage map is built, so
// collecting less often saves a good part of the start-up. Go initialises
// packages in import-path order once their dependencies are done, and this
// one depends on nothing heavy, so it runs before the Kubernetes and etcd
// packages whose initialisers do that allocating. GOGC, when set, wins.
package gctune

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

const gcPercent = 300

func init() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}

// Steady restores the default pacing once start-up is over, for the work a
// command then does (writing a large manifest holds it in memory, and the
// start-up pacing would let four times that pile up). GOGC, when set, wins.
func Steady() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(100)
	}
}

// BoundHeap sets a soft limit on the Go heap for a command that lists many
// objects: what it keeps beside the list (the storage map, with a thousand
// CRDs tens of MiB; the stores of the CRDs a scan is at) and two pages (and a
// table's cells) stay live; the rest is garbage from decoding and encoding,
// which a limit of streamingLimit above what is live collects before it
// piles up. The limit follows what each collection leaves live: a fixed one
// below what is kept would run the collector without end. GOMEMLIMIT, when
// set, wins.
func BoundHeap() {
	mu.Lock()
	defer mu.Unlock()
	if !bounded {
		bounded = true
		follow()
	}
	setLimit()
}

// follow sets the limit again after each collection, from what it left
// live: a finalizer runs once the collection that found its object
// unreachable is over.
func follow() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		mu.Lock()
		defer mu.Unlock()
		setLimit()
		follow()
	})
}

// sentinel is large enough to have an allocation of its own, which a
// finalizer needs.
type sentinel struct{ _ [16]byte }

// kept is the memory the Go runtime holds for what the last collection left
// live, which the memory limit counts: heap objects, stacks and the
// runtime's own.
func kept() int64 {
	samples := []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
	}
	metrics.Read(samples)
	var n int64
	for i, s := range samples {
		if s.Value.Kind() != metrics.KindUint64 {
			return 0
		}
		if i < 2 {
			n += int64(s.Value.Uint64())
		} else {
			n -= int64(s.Value.Uint64())
		}
	}
	return n
}

// Reserve adds n bytes to the bound, for memory the process keeps beside
// the list it streams: the index of a snapshot served in-process, and the
// responses its server builds. Without it the collector would run ever more
// often as that memory grows, to keep the list's garbage within what is
// left. It may be called before or after BoundHeap, from any goroutine.
func Reserve(n int64) {
	mu.Lock()
	defer mu.Unlock()
	reserved += n
	if bounded {
		setLimit()
	}
}

var (
	mu       sync.Mutex
	bounded  bool
	reserved int64
)

func setLimit() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(max(kept()+streamingLimit+reserved, heapFloor))
	}
}

const streamingLimit = 32 << 20

// heapFloor is the least the bound allows. Each collection marks all that
// is live (the storage map, the server's schemes: tens of MiB) however
// little garbage it finds, so at streamingLimit alone a list of pods spent
// a fifth of its CPU collecting. At the floor a process peaks near 210 MiB
// with the binary's code, within its 250; what a snapshot's index holds
// beside the list takes the bound above it.
const heapFloor = 128 << 20
