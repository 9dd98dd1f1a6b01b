package diffcmd

import (
	"errors"
	"strings"
	"testing"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/cli/clitest"
)

// TestPointsInTime reads --from and --to as a diff over time takes them,
// a revision by number or by time, with no etcd; what names no point in
// time is trouble (exit 2).
func TestPointsInTime(t *testing.T) {
	for _, args := range [][]string{
		{"--from", "rev:12"},
		{"--from", "rev:90m", "-n", "shop"},
		{"--from", "rev:2026-11-29T14:00:00Z", "--to", "rev:1h"},
		{"--from", "backup.db", "--to", "rev:2026-11-29T15:00:00+01:00", "configmaps"},
	} {
		o, err := clitest.Parse(t, New, 0, args...)
		if err != nil || o.From != args[1] {
			t.Errorf("%v: %+v, %v", args, o, err)
		}
	}
	for want, args := range map[string][]string{
		`"rev:yesterday" names no revision: rev:N takes a revision above 0, rev:TIME an RFC 3339 time (rev:2026-11-29T14:00:00Z) or an age (rev:90m)`: {"--from", "rev:yesterday"},
		`"rev:-5m" names no revision`: {"--from", "rev:3", "--to", "rev:-5m"},
	} {
		_, err := clitest.Parse(t, New, 0, args...)
		var exit *cli.ExitError
		if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.As(err, &exit) || exit.Code != 2 {
			t.Errorf("%v: %v, want trouble saying %q", args, err, want)
		}
	}
	clitest.RefusedAt(t, New, "90m", "`--revision` and `--from`: name the revisions with rev:N or rev:TIME", "--from", "rev:3")
}
