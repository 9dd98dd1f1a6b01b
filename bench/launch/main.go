// Command launch runs one command and writes its wall time and peak resident
// set size to a file, for the benchmark harness:
//
//	launch RESULT-FILE PROGRAM [ARG...]
//
// It exists because a child's ru_maxrss starts from the resident size of the
// process that forked it (the memory of the parent is recorded when the
// child execs): measured straight from the harness, which holds an etcd and
// kube-apiserver's stores, every command would seem to use at least what the
// harness does. This process is a few MiB, so what it reports for its child
// is the child's own peak unless that is smaller.
//
// The command's standard streams are this process's, and so is its exit code.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: launch RESULT-FILE PROGRAM [ARG...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[2], os.Args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		fmt.Fprintln(os.Stderr, "launch:", err)
		os.Exit(2)
	}
	rusage := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	// wall in nanoseconds, peak RSS in KiB (Linux reports ru_maxrss in KiB).
	result := fmt.Sprintf("%d %d\n", wall.Nanoseconds(), rusage.Maxrss)
	if err := os.WriteFile(os.Args[1], []byte(result), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "launch:", err)
		os.Exit(2)
	}
	os.Exit(cmd.ProcessState.ExitCode())
}
