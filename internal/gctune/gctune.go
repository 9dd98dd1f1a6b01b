// Package gctune is regctl's garbage collector policy. Only regctl's main
// package imports it: its initialiser sets the start-up pacing as early as a
// Go program can, and commands call Steady and BoundHeap when their own work
// begins.
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
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(streamingLimit)
	}
}

const streamingLimit = 64 << 20
