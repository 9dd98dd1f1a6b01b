package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/regctl/regctl/internal/etcdview/embedded"
)

// An etcd inside regctl that gives up while it runs ends the command with
// exit status 2 and etcd's one line, and takes an ephemeral etcd's data
// with it: etcdview tells, main ends the process.
func TestAnEtcdThatStopsEndsTheCommand(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	e, err := embedded.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	stops := make(chan error, 1)
	stops <- &embedded.StoppedError{Msg: "failed to save Raft hard state and entries: write 0.wal: no space left on device", Full: true}
	var errOut strings.Builder
	code := -1
	exitWhenEtcdStops(stops, &errOut, func(c int) { code = c })
	if code != 2 {
		t.Errorf("exit status %d, want 2", code)
	}
	want := "error: the etcd inside regctl stopped: failed to save Raft hard state and entries: write 0.wal: no space left on device; free space on that disk and run the command again\n"
	if errOut.String() != want {
		t.Errorf("said %q, want %q", errOut.String(), want)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "regctl-etcd-*")); len(left) > 0 {
		t.Errorf("the ephemeral etcd's data stayed: %v", left)
	}
}
