// Package clitest runs a command's flag parsing, Complete and Validate
// with a runF that keeps the options and does nothing, for the tests
// beside each command: no etcd is named, none is dialed.
package clitest

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
)

// Globals are the flags every command shares, as the root command makes
// them, with --revision; output is discarded.
func Globals(revision int64) *cli.Globals {
	return &cli.Globals{IO: cli.IOStreams{In: &bytes.Buffer{}, Out: io.Discard, ErrOut: io.Discard}, Server: serverflags.NewOptions(), RequestTimeout: 5 * time.Second, Revision: revision}
}

// Parse runs newCmd's flag parsing, Complete and Validate on args and
// returns the options its run would get; nil, with the error, when the
// flags are refused.
func Parse[O any](t testing.TB, newCmd func(*cli.Globals, func(context.Context, *O) error) *cobra.Command, revision int64, args ...string) (*O, error) {
	t.Helper()
	var got *O
	cmd := newCmd(Globals(revision), func(_ context.Context, o *O) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.ExecuteContext(context.Background())
	if err != nil && got != nil {
		t.Fatalf("%v: runF ran though the flags were refused: %v", args, err)
	}
	return got, err
}

// Refused checks that args are refused with a message holding want.
func Refused[O any](t testing.TB, newCmd func(*cli.Globals, func(context.Context, *O) error) *cobra.Command, revision int64, want string, args ...string) {
	t.Helper()
	if _, err := Parse(t, newCmd, revision, args...); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%v: %v, want an error saying %q", args, err, want)
	}
}
