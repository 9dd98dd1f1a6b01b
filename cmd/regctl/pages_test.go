package main

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// A list read side by side (pages shared out among the cores, each from a
// continue token at its first key) prints what the same list read page
// after page prints, in the same order, at one revision.
func TestPagesReadSideBySideHoldWhatPagesReadInTurnHold(t *testing.T) {
	s := newLiveEtcd(t)
	// "a-b" sorts between "a/" and "b/" as a key, but after "a" as a name.
	for _, ns := range []string{"a", "a-b", "b"} {
		s.createPods(t, ns, 7, nil)
	}
	at := fmt.Sprint(s.revision(t))
	// Written after `at`: the list at `at` sees none of it.
	s.createPods(t, "c", 3, nil)
	if _, err := s.client.Delete(context.Background(), "/registry/pods/a-b/pod-00003"); err != nil {
		t.Fatal(err)
	}
	inTurn := func(args ...string) string {
		t.Helper()
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
		return mustRun(t, args...)
	}
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	for _, chunk := range []string{"1", "2", "3", "5", "500"} {
		for _, args := range [][]string{
			{"get", "pods", "-A", "-o", "name"},
			{"get", "pods", "-A", "-o", "json"},
			{"get", "pods", "-n", "a-b"},
			{"get", "pods", "-A", "-o", "name", "--revision", at},
		} {
			args = append(args, "--chunk-size", chunk, s.flag())
			sideBySide := withoutAge(mustRun(t, args...))
			if want := withoutAge(inTurn(args...)); sideBySide != want {
				t.Errorf("%v: side by side:\n%s\npage after page:\n%s", args, sideBySide, want)
			}
		}
	}
	got := mustRun(t, "get", "pods", "-A", "-o", "name", "--revision", at, "--chunk-size", "2", s.flag())
	if n := strings.Count(got, "\n"); n != 21 || !strings.Contains(got, "pod/pod-00003\n") {
		t.Errorf("list at revision %s: %d pods, want the 21 there were then:\n%s", at, n, got)
	}
	now := mustRun(t, "get", "pods", "-A", "--chunk-size", "2", s.flag())
	if n := strings.Count(now, "\n") - 1; n != 23 || strings.Contains(now, "a-b         pod-00003") {
		t.Errorf("list now: %d pods, want 23, without a-b/pod-00003:\n%s", n, now)
	}
}

// withoutAge drops a table's last column, AGE, which moves with the clock.
func withoutAge(out string) string {
	if !strings.HasPrefix(out, "NAME") {
		return out
	}
	var b strings.Builder
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) > 0 {
			fields = fields[:len(fields)-1]
		}
		b.WriteString(strings.Join(fields, " ") + "\n")
	}
	return b.String()
}
