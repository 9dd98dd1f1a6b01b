package early

import (
	"os"
	"testing"
)

// TestVerbosityIsReadAmongOtherFlags: -v is read from a command line full
// of flags this package does not know, in each of its spellings; a
// command line without it is 0.
func TestVerbosityIsReadAmongOtherFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"get", "pods", "-A"}, 0},
		{[]string{"get", "pods", "-v", "2"}, 2},
		{[]string{"--etcd-servers=https://10.0.0.2:2379", "-v=3", "scan"}, 3},
		{[]string{"routes", "--v", "1", "--watch-cache-sizes", "secrets#0"}, 1},
		{[]string{"keys", "--authorization-mode", "RBAC", "-n", "shop"}, 0},
		{[]string{"get", "-v", "many"}, 0},
	} {
		if got := verbosity(tc.args); got != tc.want {
			t.Errorf("%v: verbosity %d, want %d", tc.args, got, tc.want)
		}
	}
}

// TestStderrIsQuietUntilRestored: a process started without -v (this
// test's) runs its package initialisers with stderr on the null device;
// Restore gives it back.
func TestStderrIsQuietUntilRestored(t *testing.T) {
	if stderr == nil || os.Stderr.Name() != os.DevNull {
		t.Fatalf("during initialisation stderr was %q, want %s", os.Stderr.Name(), os.DevNull)
	}
	Restore()
	if os.Stderr != stderr || os.Stderr.Name() == os.DevNull {
		t.Errorf("after Restore stderr is %q, want the process's own", os.Stderr.Name())
	}
}
