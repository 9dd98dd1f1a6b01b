// Command bench measures regctl as whole processes: median and spread of wall
// time, and peak resident memory, over repeated runs.
//
//	go run ./bench routes [-n 20]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"time"
)

func main() {
	n := flag.Int("n", 20, "runs per command")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: go run ./bench [-n runs] routes")
		os.Exit(2)
	}
	dir, err := os.MkdirTemp("", "regctl-bench-")
	check(err)
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "regctl")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./cmd/regctl")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	check(build.Run())

	switch flag.Arg(0) {
	case "routes":
		fmt.Printf("%-40s %10s %10s %10s %12s\n", "command", "median", "min", "max", "peak RSS")
		report("regctl routes", measure(*n, bin, "routes"))
		report("regctl routes -o yaml", measure(*n, bin, "routes", "-o", "yaml"))
	default:
		fmt.Fprintf(os.Stderr, "unknown benchmark %q\n", flag.Arg(0))
		os.Exit(2)
	}
}

type sample struct {
	wall   time.Duration
	maxRSS int64 // KiB
}

// measure runs bin with args n times, after one warm-up run.
func measure(n int, bin string, args ...string) []sample {
	var out []sample
	for i := 0; i <= n; i++ {
		cmd := exec.Command(bin, args...)
		start := time.Now()
		if err := cmd.Run(); err != nil {
			check(fmt.Errorf("running %s %v: %w", bin, args, err))
		}
		s := sample{wall: time.Since(start), maxRSS: cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss}
		if i > 0 {
			out = append(out, s)
		}
	}
	return out
}

func report(name string, samples []sample) {
	sort.Slice(samples, func(i, j int) bool { return samples[i].wall < samples[j].wall })
	var peak int64
	for _, s := range samples {
		peak = max(peak, s.maxRSS)
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000) }
	fmt.Printf("%-40s %10s %10s %10s %9.1f MiB\n", name,
		ms(samples[len(samples)/2].wall), ms(samples[0].wall), ms(samples[len(samples)-1].wall), float64(peak)/1024)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
