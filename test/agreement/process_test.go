package agreement

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// ownProcess marks the test process a test runs in alone.
const ownProcess = "REGCTL_TEST_OWN_PROCESS"

// inProcessOfItsOwn runs t again in a process of its own, for a test of
// what is the process's: a server's metrics (every server started in a
// process adds to them), feature gates and the emulated version (which a
// map and a test server set for the whole process). It reports false in
// the test's first process, which then has nothing more to do and can run
// beside the other tests, and true in the one it starts, which runs the
// test.
func inProcessOfItsOwn(t *testing.T) bool {
	t.Helper()
	if os.Getenv(ownProcess) == t.Name() {
		return true
	}
	var run []string
	for _, part := range strings.Split(t.Name(), "/") {
		run = append(run, "^"+regexp.QuoteMeta(part)+"$")
	}
	cmd := exec.Command(os.Args[0], "-test.run="+strings.Join(run, "/"), "-test.count=1")
	cmd.Env = append(os.Environ(), ownProcess+"="+t.Name())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s in a process of its own: %v\n%s", t.Name(), err, out)
	}
	return false
}
