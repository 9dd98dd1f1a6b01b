package logstest

import (
	"os"
	"testing"

	"k8s.io/klog/v2"

	"github.com/regctl/regctl/internal/logs"
)

// TestMain raises the logs first, as the server's test utilities do when
// a test binary links them (klog at 5), then runs the tests under Main.
func TestMain(m *testing.M) {
	logs.Setup(5, os.Stderr)
	Main(m)
}

// TestTestsRunQuiet: tests run under Main as regctl runs without -v,
// whatever the logs were before: klog at 0 and an embedded etcd with no
// logger.
func TestTestsRunQuiet(t *testing.T) {
	if klog.V(1).Enabled() || logs.Etcd() != nil {
		t.Errorf("klog -v 1 enabled %v, etcd's logger %v: want both quiet", klog.V(1).Enabled(), logs.Etcd())
	}
}
