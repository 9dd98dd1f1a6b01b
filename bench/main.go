// Command bench measures regctl as whole processes: median and spread of wall
// time, and peak resident memory, over repeated runs.
//
//	go run ./bench [-n 20] routes
//	go run ./bench [-n 5] [-pods 10000] reads
//	go run ./bench [-n 3] [-pods 10000] writes
//	go run ./bench [-n 3] [-pods 100000] snapshots
//	go run ./bench [-n 3] [-pods 150000] scans
//	go run ./bench [-n 5] [-pods 10000] plaintext
//	go run ./bench [-n 3] [-pods 10000] [-crds 1000] crds
//	go run ./bench [-n 3] [-pods 20000] migrate
//	go run ./bench [-n 3] [-pods 100000] diffs
//	go run ./bench [-n 10] [-pods 10000] releases
//	go run ./bench [-n 3] [-pods 1000000] [-match REGEXP] scale
//
// With -profile DIR, each regctl command is also run n times from a build of
// regctl that writes CPU and allocation profiles into DIR.
//
// reads starts an etcd in this process, writes pods into it through
// kube-apiserver's pod store, and measures regctl's reads next to etcdctl's
// raw reads of the same keys and, through a kube-apiserver on that etcd,
// kubectl's (see reads.go). writes creates pods from one manifest with
// regctl and with kubectl through a kube-apiserver (see writes.go).
// snapshots reads the pods from a snapshot of that etcd next to the live
// one, and times opening snapshots of two sizes (see snapshots.go). scans
// runs regctl scan and regctl space over pods, config maps and events next
// to etcdctl's raw read of every key, at two sizes (see scans.go). crds runs regctl's
// commands on a sandbox of pods and on the same sandbox with a thousand
// CRDs made from real projects' CRDs (see crds.go). migrate re-encrypts
// secrets after a key rotation next to kubectl's get | replace through a
// kube-apiserver (see migrate.go). diffs compares two points in time of
// pods, 1% of them changed, next to etcdctl's read of both (see diffs.go).
// releases measures routes, get and scan of each Kubernetes release's
// regctl on the same etcd, in turn (see releases.go). scale loads pods as
// the pod store writes them, to 10,000, 100,000, then -pods, and measures
// lists, selectors, keys and scan at each size next to etcdctl's read of
// the same keys, live and through a snapshot (see scale.go). restores
// brings a namespace of config maps back from a snapshot, next to the
// route through a kube-apiserver started on it (see restores.go).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

func main() {
	n := flag.Int("n", 20, "runs per command")
	pods := flag.Int("pods", 10000, "reads, writes, snapshots, scans, crds, diffs, releases: pods to write before measuring; plaintext, migrate: secrets; restores: config maps")
	crdCount := flag.Int("crds", 1000, "crds: CRDs to create, from the real ones of bench/testdata/crds")
	profile := flag.String("profile", "", "also write CPU and allocation profiles of each regctl command to this directory")
	match := flag.String("match", "", "scale, writes: measure only the commands whose name matches this regular expression")
	flag.StringVar(&regctlBin, "regctl", "", "measure this regctl binary rather than a build of ./cmd/regctl (one build against another)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: go run ./bench [-n runs] [-pods N] [-profile DIR] routes|reads|writes|snapshots|scans|plaintext|crds|migrate|diffs|releases|scale|restores")
		os.Exit(2)
	}
	if *match != "" {
		re, err := regexp.Compile(*match)
		if err != nil {
			fmt.Fprintf(os.Stderr, "-match: %v\n", err)
			os.Exit(2)
		}
		matching = re
	}
	switch flag.Arg(0) {
	case "routes", "reads", "writes", "snapshots", "scans", "plaintext", "crds", "migrate", "diffs", "releases", "scale", "restores":
	default:
		fmt.Fprintf(os.Stderr, "unknown benchmark %q: want routes, reads, writes, snapshots, scans, plaintext, crds, migrate, diffs, releases, scale or restores\n", flag.Arg(0))
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *n, *pods, *crdCount, *profile); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// regctlBin, when set, is the regctl measured, built elsewhere.
var regctlBin string

// matching, when set, is -match: only the commands whose name it matches
// are measured.
var matching *regexp.Regexp

// measured is whether the command named is measured.
func measured(name string) bool { return matching == nil || matching.MatchString(name) }

func run(benchmark string, n, pods, crdCount int, profileDir string) error {
	dir, err := os.MkdirTemp("", "regctl-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := regctlBin
	if bin == "" {
		bin = filepath.Join(dir, "regctl")
		progress("building regctl")
		if err := releaseBuild(goCmd("", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./cmd/regctl")).Run(); err != nil {
			return fmt.Errorf("building regctl: %w", err)
		}
	}
	launcher := filepath.Join(dir, "launch")
	if err := goCmd("", "build", "-o", launcher, "./bench/launch").Run(); err != nil {
		return fmt.Errorf("building the launcher: %w", err)
	}
	var profile func([]command) error
	if profileDir != "" {
		profile = func(cmds []command) error {
			progress("building regctl with profiling")
			profBin, err := buildProfiling(dir)
			if err != nil {
				return err
			}
			return profileRuns(profBin, profileDir, n, cmds)
		}
	}
	switch benchmark {
	case "reads":
		return reads(dir, launcher, bin, n, pods, profile)
	case "writes":
		return writes(dir, launcher, bin, n, pods, profile)
	case "snapshots":
		return snapshots(dir, launcher, bin, n, pods, profile)
	case "scans":
		return scans(dir, launcher, bin, n, pods, profile)
	case "plaintext":
		return plaintext(dir, launcher, bin, n, pods)
	case "crds":
		return crds(dir, launcher, bin, n, pods, crdCount)
	case "migrate":
		return migrateBench(dir, launcher, bin, n, pods)
	case "diffs":
		return diffs(dir, launcher, bin, n, pods)
	case "releases":
		return releasesBench(dir, launcher, n, pods)
	case "scale":
		return scale(dir, launcher, bin, n, pods, profile)
	case "restores":
		return restores(dir, launcher, bin, n, pods, profile)
	}
	t := newTable(launcher, 40, false)
	cmds := []command{
		{name: "regctl routes", bin: bin, args: []string{"routes"}},
		{name: "regctl routes -o yaml", bin: bin, args: []string{"routes", "-o", "yaml"}},
	}
	var all []stats
	for _, c := range cmds {
		st, err := t.add(c, n, nil)
		if err != nil {
			return err
		}
		all = append(all, st)
	}
	fmt.Println()
	fmt.Println("targets:")
	for i, st := range all {
		verdict(fmt.Sprintf("%s: %s median", cmds[i].name, ms(st.median)), fmt.Sprintf("<= %d ms", routesWallTarget.Milliseconds()), st.median <= routesWallTarget)
		verdict(fmt.Sprintf("%s: %.1f MiB peak RSS", cmds[i].name, st.mib()), fmt.Sprintf("<= %d MiB", routesRSSTarget), st.mib() <= routesRSSTarget)
	}
	if profile != nil {
		return profile(cmds)
	}
	return nil
}

// The whole server's map, every built-in group, as one process.
const (
	routesWallTarget = 250 * time.Millisecond
	routesRSSTarget  = 120 // MiB
)

// command is one process to measure.
type command struct {
	name string // as shown in the report
	bin  string
	args []string
	env  []string // added to the environment
	// verify, when set, checks the standard output of the warm-up run, so
	// that a command that prints nothing useful is not timed.
	verify func(stdout []byte) error
	// reset, when set, runs before every run, to give each the same start.
	reset func() error
	// check, when set, runs after the warm-up run, to see that it did its
	// work (for commands whose work is not their output).
	check func() error
}

type sample struct {
	wall   time.Duration
	maxRSS int64 // KiB
}

// measure runs c n times, after one warm-up run, each time through
// launcher (see bench/launch), which reports the wall time and peak RSS.
func measure(launcher string, n int, c command) ([]sample, error) {
	var out []sample
	for i := 0; i <= n; i++ {
		if c.reset != nil {
			if err := c.reset(); err != nil {
				return nil, fmt.Errorf("resetting for %s: %w", c.name, err)
			}
		}
		r, err := runOnce(launcher, c, i == 0 && c.verify != nil)
		if err != nil {
			return nil, err
		}
		if i == 0 && c.verify != nil {
			if err := c.verify(r.stdout); err != nil {
				return nil, fmt.Errorf("%s: %w", c.name, err)
			}
		}
		if i == 0 && c.check != nil {
			if err := c.check(); err != nil {
				return nil, fmt.Errorf("%s: %w", c.name, err)
			}
		}
		if i > 0 {
			out = append(out, r.sample)
		}
	}
	return out, nil
}

// runResult is one run of a command: its measure, and its standard output when
// asked for.
type runResult struct {
	sample
	stdout []byte
}

// runOnce runs c once through launcher, keeping its standard output when
// stdout is set.
func runOnce(launcher string, c command, stdout bool) (runResult, error) {
	result := filepath.Join(filepath.Dir(launcher), "result")
	os.Remove(result)
	cmd := exec.Command(launcher, append([]string{result, c.bin}, c.args...)...)
	cmd.Env = append(os.Environ(), c.env...)
	var stderr bytes.Buffer
	// The output is kept in a file the command writes itself: copied
	// into this process while the command runs, gigabytes of it (a
	// million pods in json) would stall the etcd this process serves.
	outPath := filepath.Join(filepath.Dir(launcher), "stdout")
	if stdout {
		f, err := os.Create(outPath)
		if err != nil {
			return runResult{}, err
		}
		defer os.Remove(outPath)
		defer f.Close()
		cmd.Stdout = f
	}
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return runResult{}, fmt.Errorf("running %s: %w: %s", c.name, err, strings.TrimSpace(stderr.String()))
	}
	var out []byte
	if stdout {
		var err error
		if out, err = os.ReadFile(outPath); err != nil {
			return runResult{}, err
		}
	}
	var wall, maxRSS int64
	data, err := os.ReadFile(result)
	if err == nil {
		_, err = fmt.Sscan(string(data), &wall, &maxRSS)
	}
	if err != nil {
		return runResult{}, fmt.Errorf("reading the measure of %s: %w", c.name, err)
	}
	return runResult{sample: sample{wall: time.Duration(wall), maxRSS: maxRSS}, stdout: out}, nil
}

// stats summarises a command's runs.
type stats struct {
	median, min, max time.Duration
	peakRSS          int64 // KiB
}

func summarise(samples []sample) stats {
	sort.Slice(samples, func(i, j int) bool { return samples[i].wall < samples[j].wall })
	st := stats{median: samples[len(samples)/2].wall, min: samples[0].wall, max: samples[len(samples)-1].wall}
	for _, s := range samples {
		st.peakRSS = max(st.peakRSS, s.maxRSS)
	}
	return st
}

func (s stats) mib() float64 { return float64(s.peakRSS) / 1024 }

// table prints one row per measured command as soon as it is measured.
type table struct {
	launcher  string
	nameWidth int
	ratios    bool   // a last column comparing with an anchor command
	header    string // that column's title
	printed   bool
}

func newTable(launcher string, nameWidth int, ratios bool) *table {
	return &table{launcher: launcher, nameWidth: nameWidth, ratios: ratios, header: "vs etcdctl"}
}

// printHeader prints the column titles, before the first row.
func (t *table) printHeader() {
	fmt.Printf("%-*s %10s %10s %10s %12s", t.nameWidth, "command", "median", "min", "max", "peak RSS")
	if t.ratios {
		fmt.Printf("   %s", t.header)
	}
	fmt.Println()
}

// add measures c and prints its row; ratio, when set, makes the last
// column from the figures.
func (t *table) add(c command, n int, ratio func(stats) string) (stats, error) {
	progress("measuring " + c.name)
	samples, err := measure(t.launcher, n, c)
	if err != nil {
		return stats{}, err
	}
	st := summarise(samples)
	r := ""
	if ratio != nil {
		r = ratio(st)
	}
	t.row(c.name, st, r)
	return st, nil
}

func (t *table) row(name string, st stats, ratio string) {
	if !t.printed {
		t.printHeader()
		t.printed = true
	}
	fmt.Printf("%-*s %10s %10s %10s %8.1f MiB", t.nameWidth, name, ms(st.median), ms(st.min), ms(st.max), st.mib())
	if t.ratios {
		fmt.Printf("   %s", ratio)
	}
	fmt.Println()
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000) }

// goCmd is the go command run in dir (the current directory when empty),
// printing its output on stderr.
func goCmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd
}

// buildTags is tags with those GOFLAGS sets: a -tags flag given to the go
// command replaces GOFLAGS' own, and releases/go names the release's tag
// there (k8s1.36), which a build of an older release needs.
func buildTags(tags ...string) string {
	for _, f := range strings.Fields(os.Getenv("GOFLAGS")) {
		if t, ok := strings.CutPrefix(f, "-tags="); ok {
			tags = append(tags, strings.Split(t, ",")...)
		}
	}
	return strings.Join(tags, ",")
}

// releaseBuild builds as the release does, without cgo. It matters beyond
// the C code: with cgo, a binary that links Go's plugin package (kubectl's
// printers bring it, through kustomize) keeps every exported method for
// plugins to call, and pages in far more of itself.
func releaseBuild(cmd *exec.Cmd) *exec.Cmd {
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	return cmd
}

// progress says on stderr what the harness is doing, keeping stdout for
// the report.
func progress(msg string) { fmt.Fprintln(os.Stderr, "bench:", msg) }
