// Package logstest runs a package's tests as regctl runs without -v: what
// the server's code, etcd and grpc log is discarded, so that a test's
// output is its own.
package logstest

import (
	"io"
	"os"
	"testing"

	"github.com/regctl/regctl/internal/logs"
)

// Main is a test package's TestMain: the logs discarded, then its tests.
func Main(m *testing.M) {
	logs.Setup(0, io.Discard)
	os.Exit(m.Run())
}
