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
	"runtime/debug"
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
// objects: what is live then is two pages (and a table's cells), the rest is
// garbage from decoding and encoding, which a limit well above two pages
// collects before it piles up. GOMEMLIMIT, when set, wins.
func BoundHeap() {
	mu.Lock()
	defer mu.Unlock()
	bounded = true
	setLimit()
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
		debug.SetMemoryLimit(streamingLimit + reserved)
	}
}

const streamingLimit = 64 << 20
