package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/regctl/regctl/internal/logs"
)

// releaseSpread is the target of the releases benchmark: no release's
// regctl is slower than another's by more than this, command by command.
const releaseSpread = 1.10

// releasesBench builds regctl for every Kubernetes release it builds for
// (releases/go) and measures the same commands of each on the same etcd:
// routes, get and scan over pods, config maps and events. The releases run
// in turn within each round, so that whatever else the machine does falls
// on all of them alike.
func releasesBench(dir, launcher string, n, pods int) error {
	logs.Setup(0, io.Discard)
	minors, err := releaseMinors()
	if err != nil {
		return err
	}
	bins := map[string]string{}
	for _, minor := range minors {
		progress("building regctl for Kubernetes " + minor)
		bin := filepath.Join(dir, "regctl-"+minor)
		cmd := exec.Command("releases/go", minor, "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./cmd/regctl")
		cmd.Env = append(withoutGOFLAGS(os.Environ()), "CGO_ENABLED=0")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building regctl for Kubernetes %s: %w", minor, err)
		}
		bins[minor] = bin
	}

	ctx := context.Background()
	e, w, stop, err := startWithNamespaces(ctx)
	if err != nil {
		return err
	}
	defer stop()
	progress(fmt.Sprintf("writing %d pods, config maps and events", pods))
	if err := seedMixed(w, 0, pods); err != nil {
		return err
	}
	runtime.GC()
	debug.FreeOSMemory()
	keys, size, err := storedSize(ctx, e.ClientURL, "/registry/")
	if err != nil {
		return err
	}
	fmt.Printf("%d pods, %d config maps, %d events: %d keys under /registry/, %.1f MiB of values\n\n",
		pods, pods/6, pods/6, keys, float64(size)/(1<<20))

	etcd := "--etcd-servers=" + e.ClientURL
	kinds := []struct {
		name   string
		args   []string
		verify func([]byte) error
	}{
		{"regctl routes", []string{"routes", etcd}, contains("pods/status")},
		{"regctl get pods -A -o json", []string{"get", "pods", "-A", "-o", "json", etcd}, occurs(`"kind": "Pod"`, pods)},
		{"regctl scan -o json", []string{"scan", "-o", "json", etcd}, occurs(fmt.Sprintf(`"keys": %d,`, keys), 1)},
	}
	newest := minors[len(minors)-1]
	t := newTable(launcher, 40, true)
	t.header = "vs " + newest
	type spread struct {
		name          string
		fastest, slow float64
		fastMinor     string
		slowMinor     string
	}
	var spreads []spread
	for _, k := range kinds {
		var cmds []command
		for i := len(minors) - 1; i >= 0; i-- {
			minor := minors[i]
			cmds = append(cmds, command{name: fmt.Sprintf("%s (%s)", k.name, minor), bin: bins[minor], args: k.args, verify: k.verify})
		}
		progress("measuring " + k.name + " of each release")
		all, err := measureInTurn(launcher, n, cmds)
		if err != nil {
			return err
		}
		s := spread{name: k.name, fastest: -1}
		for i, st := range all {
			minor := minors[len(minors)-1-i]
			r := "anchor"
			if minor != newest {
				r = fmt.Sprintf("%.2fx", ratio(st, all[0]))
			}
			t.row(cmds[i].name, st, r)
			ms := float64(st.median)
			if s.fastest < 0 || ms < s.fastest {
				s.fastest, s.fastMinor = ms, minor
			}
			if ms > s.slow {
				s.slow, s.slowMinor = ms, minor
			}
		}
		spreads = append(spreads, s)
	}
	fmt.Println()
	fmt.Println("targets:")
	for _, s := range spreads {
		r := s.slow / s.fastest
		verdict(fmt.Sprintf("%s: %s %.2fx %s", s.name, s.slowMinor, r, s.fastMinor), fmt.Sprintf("<= %.2fx", releaseSpread), r <= releaseSpread)
	}
	return nil
}

// measureInTurn runs each command once to warm up (and verify), then n
// rounds of each command once, the order turning by one every round.
func measureInTurn(launcher string, n int, cmds []command) ([]stats, error) {
	samples := make([][]sample, len(cmds))
	for _, c := range cmds {
		r, err := runOnce(launcher, c, c.verify != nil)
		if err != nil {
			return nil, err
		}
		if c.verify != nil {
			if err := c.verify(r.stdout); err != nil {
				return nil, fmt.Errorf("%s: %w", c.name, err)
			}
		}
	}
	for round := 0; round < n; round++ {
		for j := range cmds {
			i := (round + j) % len(cmds)
			r, err := runOnce(launcher, cmds[i], false)
			if err != nil {
				return nil, err
			}
			samples[i] = append(samples[i], r.sample)
		}
	}
	out := make([]stats, len(cmds))
	for i := range cmds {
		out[i] = summarise(samples[i])
	}
	return out, nil
}

// releaseMinors lists the Kubernetes minors regctl builds for, oldest
// first: those of releases/k8s-MINOR.mod, then the root module's.
func releaseMinors() ([]string, error) {
	mods, err := filepath.Glob("releases/k8s-*.mod")
	if err != nil {
		return nil, err
	}
	var minors []string
	for _, m := range mods {
		minors = append(minors, strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m), "k8s-"), ".mod"))
	}
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "k8s.io/kubernetes")
	cmd.Env = withoutGOFLAGS(os.Environ())
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("finding the newest release: %w", err)
	}
	newest, err := version.ParseGeneric(strings.TrimSpace(string(out)))
	if err != nil {
		return nil, fmt.Errorf("reading the newest release: %w", err)
	}
	minors = append(minors, fmt.Sprintf("%d.%d", newest.Major(), newest.Minor()))
	sort.Slice(minors, func(i, j int) bool {
		return version.MustParseGeneric(minors[i]).LessThan(version.MustParseGeneric(minors[j]))
	})
	return minors, nil
}

// withoutGOFLAGS is env without GOFLAGS: the harness may itself run under
// releases/go, whose -modfile would otherwise reach every build.
func withoutGOFLAGS(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GOFLAGS=") {
			out = append(out, kv)
		}
	}
	return out
}
