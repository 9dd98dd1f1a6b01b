package storagemap

import (
	"testing"

	"github.com/regctl/regctl/internal/logs/logstest"
)

func TestMain(m *testing.M) { logstest.Main(m) }
