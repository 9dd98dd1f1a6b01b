package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// profileHook is added to package main of cmd/regctl, through the go
// command's -overlay, in a second build of regctl that writes profiles; the
// measured binary is built without it. When REGCTL_BENCH_CPUPROFILE is set it
// runs the command from init, under the CPU profiler, then writes the
// allocation profile, and exits: main's os.Exit would skip a deferred stop.
const profileHook = `package main

import (
	"context"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/regctl/regctl/internal/cli"
)

func init() {
	cpu, allocs := os.Getenv("REGCTL_BENCH_CPUPROFILE"), os.Getenv("REGCTL_BENCH_ALLOCSPROFILE")
	if cpu == "" {
		return
	}
	f, err := os.Create(cpu)
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		panic(err)
	}
	code := Run(context.Background(), cli.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}, os.Args[1:])
	pprof.StopCPUProfile()
	f.Close()
	if allocs != "" {
		runtime.GC()
		a, err := os.Create(allocs)
		if err != nil {
			panic(err)
		}
		if err := pprof.Lookup("allocs").WriteTo(a, 0); err != nil {
			panic(err)
		}
		a.Close()
	}
	os.Exit(code)
}
`

// buildProfiling builds regctl as the harness does, plus profileHook.
func buildProfiling(dir string) (string, error) {
	hook := filepath.Join(dir, "profile_hook.go")
	if err := os.WriteFile(hook, []byte(profileHook), 0o644); err != nil {
		return "", err
	}
	target, err := filepath.Abs(filepath.Join("cmd", "regctl", "zz_bench_profile_hook.go"))
	if err != nil {
		return "", err
	}
	overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{target: hook}})
	if err != nil {
		return "", err
	}
	overlayFile := filepath.Join(dir, "profile_overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "regctl-profiling")
	if err := releaseBuild(goCmd("", "build", "-trimpath", "-ldflags=-s -w", "-overlay", overlayFile, "-o", bin, "./cmd/regctl")).Run(); err != nil {
		return "", fmt.Errorf("building regctl with profiling: %w", err)
	}
	return bin, nil
}

// profileRuns runs each command n times with the profiling build, writing
// NAME.RUN.cpu.pprof and NAME.RUN.allocs.pprof to out, where NAME is the
// command with its words joined by dashes.
func profileRuns(bin, out string, n int, cmds []command) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, c := range cmds {
		progress("profiling " + c.name)
		name := strings.Join(strings.FieldsFunc(c.name, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		}), "-")
		for i := 1; i <= n; i++ {
			if c.reset != nil {
				if err := c.reset(); err != nil {
					return err
				}
			}
			prefix := filepath.Join(out, fmt.Sprintf("%s.%d", name, i))
			cmd := exec.Command(bin, c.args...)
			cmd.Env = append(os.Environ(), c.env...)
			cmd.Env = append(cmd.Env, "REGCTL_BENCH_CPUPROFILE="+prefix+".cpu.pprof", "REGCTL_BENCH_ALLOCSPROFILE="+prefix+".allocs.pprof")
			cmd.Stderr = os.Stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("profiling %s: %w", c.name, err)
			}
		}
	}
	fmt.Fprintf(os.Stderr, "bench: profiles in %s; e.g. go tool pprof -top %s/<command>.*.cpu.pprof\n", out, out)
	return nil
}
