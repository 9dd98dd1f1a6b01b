package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/etcdview/embedded"
)

// The tests in this file run the built binary: what reaches a user's
// terminal from libraries that write to the process's stderr, signals and
// exit codes can only be seen from outside the process.

// binaryName is the name under which the test binary is regctl: TestMain
// runs regctl's main when it is started as such.
const binaryName = "regctl"

var (
	binaryOnce sync.Once
	binaryDir  string
	binaryPath string
	binaryErr  error
)

// regctlBinary is regctl as a program of its own: this test binary, linked
// under regctl's name, which TestMain turns into regctl's main. It links
// what regctl links and the tests' packages besides, whose initialisers
// run before main as regctl's own do; linking regctl a second time would
// cost the suite a build of a few hundred MiB.
func regctlBinary(t *testing.T) string {
	t.Helper()
	binaryOnce.Do(func() {
		var self string
		if self, binaryErr = os.Executable(); binaryErr != nil {
			return
		}
		if binaryDir, binaryErr = os.MkdirTemp("", "regctl-test-bin-"); binaryErr != nil {
			return
		}
		binaryPath = filepath.Join(binaryDir, binaryName)
		binaryErr = os.Symlink(self, binaryPath)
	})
	if binaryErr != nil {
		t.Fatalf("linking regctl: %v", binaryErr)
	}
	return binaryPath
}

func removeBinary() {
	if binaryDir != "" {
		os.RemoveAll(binaryDir)
	}
}

func TestCutOffListIsNotMistakenForWholeAndLogsNothing(t *testing.T) {
	t.Parallel()
	bin := regctlBinary(t)
	e, err := embedded.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	var stop sync.Once
	t.Cleanup(func() { stop.Do(func() { e.Close() }) })
	s := &liveEtcd{url: e.ClientURL}
	s.createPods(t, "default", 300, nil)
	cmd, stdout, stderr := startBinary(t, bin, "get", "pods", "-o", "json", "--chunk-size=10", "--request-timeout=2s", s.flag())
	// Read one byte, then let the pipe fill so regctl waits mid-list, and
	// stop etcd under it: its next page cannot be read, and the etcd
	// client inside the server's storage layer has retries to complain of.
	first := make([]byte, 1)
	if _, err := io.ReadFull(stdout, first); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	stop.Do(func() { e.Close() })
	rest, _ := io.ReadAll(stdout)
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("exit %v: want non-zero for a list that stopped early", err)
	}
	var doc any
	if json.Unmarshal(append(first, rest...), &doc) == nil {
		t.Error("stdout is a complete JSON document though the list stopped early")
	}
	if strings.Contains(stderr.String(), `"level"`) || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "did not answer within 2s") {
		t.Errorf("stderr %q: want one line saying etcd did not answer, and no library logs", stderr.String())
	}
}

func TestCtrlCExits130AtOnce(t *testing.T) {
	t.Parallel()
	bin := regctlBinary(t)
	// etcd never answers, and the request timeout is long: only Ctrl-C
	// ends the command.
	cmd := exec.Command(bin, "get", "pods", "--etcd-servers="+blackhole(t), "--request-timeout=5m")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 130 {
			t.Errorf("exit %v: want 130", err)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("regctl did not stop on Ctrl-C")
	}
	if stdout.Len() != 0 || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stdout %q, stderr %q: want nothing on stdout and one line saying it was interrupted", stdout.String(), stderr.String())
	}
}

// startBinary starts the built regctl with args, its stdout a pipe to read
// as it comes and its stderr collected.
func startBinary(t *testing.T, bin string, args ...string) (*exec.Cmd, io.ReadCloser, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stdout, &stderr
}

// mustRunBinary runs the regctl binary, a process of its own: process-wide
// settings (feature gates) are its flags' alone, not what an in-process
// test server set. It fails the test unless regctl exits 0.
func mustRunBinary(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(regctlBinary(t), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("regctl %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// interruptAtFirstOutput is standard output that interrupts the command, as
// Ctrl-C does, when the command first prints.
type interruptAtFirstOutput struct {
	bytes.Buffer
	interrupt func(error)
}

func (w *interruptAtFirstOutput) Write(p []byte) (int, error) {
	if len(p) > 0 {
		w.interrupt(errInterrupted)
	}
	return w.Buffer.Write(p)
}

// TestAnInterruptedReadSaysSoEveryTime interrupts reads of many objects as
// they print (a list as a table and as json, keys) and before they print:
// the last line on stderr says it was interrupted, and that what was
// printed is partial when something was, every time, never the cancelled
// context of whatever was under way. A scan, which prints its report once
// it has read everything, is interrupted as it prints it: what it printed
// is whole.
func TestAnInterruptedReadSaysSoEveryTime(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	ctx := context.Background()
	for i := range 3000 {
		value := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%04d","namespace":"shop","uid":"u%d","creationTimestamp":"2026-01-01T00:00:00Z"},"data":{"k":"v"}}`, i, i)
		if _, err := s.client.Put(ctx, fmt.Sprintf("/registry/configmaps/shop/cm-%04d", i), value); err != nil {
			t.Fatal(err)
		}
	}
	partial := "error: interrupted: what was printed is partial"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "configmaps", "-n", "shop", "--chunk-size", "10"}, partial},
		{[]string{"get", "configmaps", "-n", "shop", "-o", "json", "--chunk-size", "10"}, partial},
		{[]string{"keys", "configmaps", "-n", "shop", "--chunk-size", "10"}, partial},
		{[]string{"scan", "-o", "json", "--chunk-size", "10"}, "error: interrupted"},
	} {
		args, want := tc.args, tc.want
		for range 5 {
			ctx, cancel := context.WithCancelCause(context.Background())
			out := &interruptAtFirstOutput{interrupt: cancel}
			var errOut bytes.Buffer
			code := Run(ctx, cli.IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: &errOut}, append(args, s.flag()))
			lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
			if code != exitInterrupted || lines[len(lines)-1] != want {
				t.Errorf("%v: exit %d, stderr %q: want %d and last %q; stdout %.200q", args, code, errOut.String(), exitInterrupted, want, out.String())
				break
			}
		}
	}
	// Interrupted before it prints.
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errInterrupted)
	var out, errOut bytes.Buffer
	if code := Run(ctx, cli.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut}, []string{"get", "configmaps", "-n", "shop", s.flag()}); code != exitInterrupted || errOut.String() != "error: interrupted\n" || out.Len() != 0 {
		t.Errorf("interrupted at once: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}
