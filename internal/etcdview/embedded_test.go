package etcdview

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
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
	e, err := StartEmbedded(nil)
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

// etcd panics when it cannot create its log (a full disk); that is an
// error saying so, not a panic. The child process runs with files limited
// to 1 MiB, where etcd's log does not fit.
func TestAnEtcdThatCannotWriteIsAnError(t *testing.T) {
	if os.Getenv("REGCTL_TEST_FILE_LIMIT") == "1" {
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 1 << 20, Max: 1 << 20}); err != nil {
			t.Fatal(err)
		}
		_, err := StartEmbedded(nil)
		if err == nil {
			t.Fatal("etcd started with files limited to 1 MiB")
		}
		os.Stdout.WriteString("error: " + err.Error() + "\n")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAnEtcdThatCannotWriteIsAnError$")
	cmd.Env = append(os.Environ(), "REGCTL_TEST_FILE_LIMIT=1", "TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child failed: %v\n%s", err, out)
	}
	want := "error: starting embedded etcd in "
	if !strings.Contains(string(out), want) || !strings.Contains(string(out), "failed to create WAL: file too large") {
		t.Errorf("the child said\n%s\nwant a line with %q and etcd's cause", out, want)
	}
}
