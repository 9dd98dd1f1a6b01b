package target_test

import (
	"io"
	"os"
	"testing"

	"github.com/regctl/regctl/internal/logs"
)

func TestMain(m *testing.M) {
	logs.Setup(0, io.Discard)
	os.Exit(m.Run())
}
