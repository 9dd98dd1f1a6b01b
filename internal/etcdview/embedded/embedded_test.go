package embedded

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/regctl/regctl/internal/logs"
)

// blocksUnder is the disk that the files under dir take.
func blocksUnder(t *testing.T, dir string) int64 {
	t.Helper()
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += info.Sys().(*syscall.Stat_t).Blocks * 512
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return total
}

// An etcd that holds a few keys takes a few megabytes of disk, not the
// 128 MB that etcd's write-ahead log preallocates by default: `regctl
// routes`, whose etcd is thrown away, starts on a nearly full disk.
func TestAnEphemeralEtcdTakesLittleDisk(t *testing.T) {
	e, err := Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if used := blocksUnder(t, e.dir); used > 32<<20 || used == 0 {
		t.Errorf("an ephemeral etcd takes %d MiB of disk, want 1 to 32", used>>20)
	}
	if !strings.HasPrefix(e.dir, os.TempDir()) {
		t.Errorf("the ephemeral etcd is in %s, outside %s", e.dir, os.TempDir())
	}
}

// limitFileSize limits the files this process writes to n bytes, in a
// child process of the test (inChild): etcd gives up on a full disk as it
// does on that.
func limitFileSize(t *testing.T, n uint64) {
	t.Helper()
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
		t.Fatal(err)
	}
}

// childEnv marks the test binary run by inChild.
const childEnv = "REGCTL_TEST_CHILD"

// inChild runs the test named in a child process of the test binary, with
// a temporary directory of its own, and returns what it wrote and its
// exit code; the test finds itself in the child with isChild.
func inChild(t *testing.T) (out string, code int, tmp string) {
	t.Helper()
	tmp = t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$")
	cmd.Env = append(os.Environ(), childEnv+"=1", "TMPDIR="+tmp)
	b, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return string(b), cmd.ProcessState.ExitCode(), tmp
}

func isChild() bool { return os.Getenv(childEnv) == "1" }

// etcd panics when it cannot create its log (a full disk); that is an
// error saying so, not a panic. The child process runs with files limited
// to 1 MiB, where etcd's log does not fit.
func TestAnEtcdThatCannotWriteIsAnError(t *testing.T) {
	if isChild() {
		limitFileSize(t, 1<<20)
		_, err := Start(nil)
		if err == nil {
			t.Fatal("etcd started with files limited to 1 MiB")
		}
		os.Stdout.WriteString("error: " + err.Error() + "\n")
		return
	}
	out, code, _ := inChild(t)
	if code != 0 {
		t.Fatalf("the child exited %d:\n%s", code, out)
	}
	want := "error: starting embedded etcd in "
	if !strings.Contains(out, want) || !strings.Contains(out, "failed to create WAL: file too large") {
		t.Errorf("the child said\n%s\nwant a line with %q and etcd's cause", out, want)
	}
}

// An etcd that gives up once it runs (a write to a full disk) says so on
// Stops, with its last error line, once, and never exits the process: the
// command decides. The child cannot grow its log past 1 MiB files: the
// next segment fails.
func TestAnEtcdThatStopsRunningSaysWhy(t *testing.T) {
	if isChild() {
		// Silent as regctl is at verbosity 0: the error is all a user sees.
		logs.Setup(0, io.Discard)
		e, err := Start(nil)
		if err != nil {
			t.Fatal(err)
		}
		c := clientOf(t, e)
		limitFileSize(t, 1<<20)
		go func() {
			value := strings.Repeat("x", 1<<20)
			for i := 0; i < 64; i++ {
				if _, err := c.Put(context.Background(), fmt.Sprintf("/k/%d", i), value); err != nil {
					return
				}
			}
		}()
		select {
		case err := <-Stops():
			os.Stdout.WriteString("error: " + err.Error() + "\n")
		case <-time.After(time.Minute):
			t.Fatal("etcd wrote 64 MiB with files limited to 1 MiB, or gave up silently")
		}
		select {
		case err := <-Stops():
			t.Errorf("Stops told twice: %v", err)
		default:
		}
		return
	}
	out, code, _ := inChild(t)
	if code != 0 {
		t.Errorf("the child exited %d, want 0: the library ended the process:\n%s", code, out)
	}
	want := "error: the etcd inside regctl stopped: failed to save Raft hard state and entries: "
	// The test binary says PASS after it.
	if !strings.HasPrefix(out, want) || strings.Count(out, "error:") != 1 || !strings.Contains(out, "file too large") {
		t.Errorf("the child said\n%s\nwant one line starting %q", out, want)
	}
}

func TestAFullDiskIsSaidSo(t *testing.T) {
	err := &StoppedError{Msg: "failed to save Raft hard state and entries: write /d/0.wal: no space left on device", Full: true}
	want := "the etcd inside regctl stopped: failed to save Raft hard state and entries: write /d/0.wal: no space left on device; free space on that disk and run the command again"
	if err.Error() != want {
		t.Errorf("got %q, want %q", err.Error(), want)
	}
}
