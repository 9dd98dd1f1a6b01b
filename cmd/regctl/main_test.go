package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/logs"
	"github.com/regctl/regctl/internal/logs/early"
)

const memLimitOff = "off"

// testGCPercent paces the collector of the test process, which holds
// kube-apiservers and etcds of a few hundred MiB live beside the commands
// it runs: at the default pacing, collecting them took a quarter of the
// tests' CPU (cmd/regctl alone: 115 s of CPU at GOGC=100, 87 s at 400, for
// 2.2 and 5.0 GiB at peak). gcPacedHere marks it as the tests' own.
const (
	testGCPercent = 400
	gcPacedHere   = "REGCTL_TEST_GOGC"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func TestMain(m *testing.M) {
	// The binary tests run this test binary as regctl (see regctlBinary):
	// it is then regctl itself, with no test in it.
	if filepath.Base(os.Args[0]) == binaryName {
		if os.Getenv("GOMEMLIMIT") == memLimitOff {
			os.Unsetenv("GOMEMLIMIT")
		}
		// The command paces its own collector, as regctl does.
		if os.Getenv(gcPacedHere) != "" {
			os.Unsetenv("GOGC")
			os.Unsetenv(gcPacedHere)
		}
		main()
		return
	}
	// GOGC, when given, wins; set, it also tells gctune to leave the
	// pacing alone in the commands run here.
	if os.Getenv("GOGC") == "" {
		os.Setenv("GOGC", strconv.Itoa(testGCPercent))
		os.Setenv(gcPacedHere, "1")
		debug.SetGCPercent(testGCPercent)
	}
	// One test process runs many commands, and beside them kube-apiservers
	// of a few hundred MiB: the heap bound a listing command sets for its
	// own process (gctune.BoundHeap) would keep the collector running
	// without pause for all of them. "off" is the runtime's own default.
	if os.Getenv("GOMEMLIMIT") == "" {
		os.Setenv("GOMEMLIMIT", memLimitOff)
	}
	early.Restore()
	logs.Setup(0, io.Discard)
	// The tests wait more than they compute (etcd elections, request
	// timeouts, servers becoming ready): six side by side keep two cores
	// busy. -test.parallel, when given, wins.
	flag.Parse()
	if !flagGiven("test.parallel") {
		_ = flag.Set("test.parallel", "6")
	}
	code := m.Run()
	removeBinary()
	os.Exit(code)
}

func flagGiven(name string) (given bool) {
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// run runs the whole CLI in-process with buffers for streams.
func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Run(context.Background(), cli.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut}, args)
	return out.String(), errOut.String(), code
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenFile(t, filepath.Join("testdata", name), got)
}

// releaseGolden is golden for an output that differs between the
// Kubernetes releases regctl builds for: testdata/<release>/name.
func releaseGolden(t *testing.T, name, got string) {
	t.Helper()
	goldenFile(t, filepath.Join("testdata", releaseVersion, name), got)
}

// committedTable is the route table of a default server committed for the
// release this build carries, the one `routes --check` checks in CI.
func committedTable() string {
	return filepath.Join("..", "..", "docs", "routes", releaseVersion+".yaml")
}

func goldenFile(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run `go test ./cmd/regctl -run %s -update` and review the diff):\n%s", path, t.Name(), got)
	}
}
