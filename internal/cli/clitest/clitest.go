// Package clitest runs a command's flag parsing, Complete and Validate
// with a runF that keeps the options and does nothing, for the tests
// beside each command: no etcd is named, none is dialed. For the tests of
// a command's Run, Etcd starts a real one and ParseOn names it.
package clitest

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/clock"
	"github.com/regctl/regctl/internal/etcdview/etcdtest"
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
	return parse(t, newCmd, Globals(revision), args...)
}

// ParseAt is Parse with `--revision` given as a time (an RFC 3339 time or
// an age), not yet told as a revision: what the command's Complete and
// Validate see of it when the command is not one that reads at it.
func ParseAt[O any](t testing.TB, newCmd func(*cli.Globals, func(context.Context, *O) error) *cobra.Command, at string, args ...string) (*O, error) {
	t.Helper()
	g := Globals(0)
	rev, when, err := clock.ParseRevision(at)
	if err != nil || rev != 0 || when.IsZero() {
		t.Fatalf("%q is no time: %v", at, err)
	}
	g.RevisionTime = when
	return parse(t, newCmd, g, args...)
}

// ParseOn is Parse with the globals g: those of Etcd, for a test that
// runs the options it gets.
func ParseOn[O any](t testing.TB, newCmd func(*cli.Globals, func(context.Context, *O) error) *cobra.Command, g *cli.Globals, args ...string) (*O, error) {
	t.Helper()
	return parse(t, newCmd, g, args...)
}

// Etcd starts an embedded etcd for the test, stopped when it ends, and
// returns the globals of a command on it, whose output goes to out and
// errOut, and a client of its own.
func Etcd(t testing.TB, out, errOut io.Writer) (*cli.Globals, *clientv3.Client) {
	t.Helper()
	e, c := etcdtest.Start(t)
	g := Globals(0)
	g.IO.Out, g.IO.ErrOut = out, errOut
	g.Server.Server.Etcd.StorageConfig.Transport.ServerList = []string{e.ClientURL}
	return g, c
}

// Put stores value at key in c's etcd, as a server would have written it
// (JSON values are read as the stores read protobuf ones).
func Put(t testing.TB, c *clientv3.Client, key, value string) {
	t.Helper()
	if _, err := c.Put(context.Background(), key, value); err != nil {
		t.Fatal(err)
	}
}

// Value is what c's etcd holds at key, nil when it holds nothing.
func Value(t testing.TB, c *clientv3.Client, key string) []byte {
	t.Helper()
	resp, err := c.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) == 0 {
		return nil
	}
	return resp.Kvs[0].Value
}

func parse[O any](t testing.TB, newCmd func(*cli.Globals, func(context.Context, *O) error) *cobra.Command, g *cli.Globals, args ...string) (*O, error) {
	t.Helper()
	var got *O
	cmd := newCmd(g, func(_ context.Context, o *O) error { got = o; return nil })
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

// RefusedAt checks that args, with `--revision` the time at, are refused
// with a message holding want.
func RefusedAt[O any](t testing.TB, newCmd func(*cli.Globals, func(context.Context, *O) error) *cobra.Command, at, want string, args ...string) {
	t.Helper()
	if _, err := ParseAt(t, newCmd, at, args...); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%v at %s: %v, want an error saying %q", args, at, err, want)
	}
}

// Refused checks that args are refused with a message holding want.
func Refused[O any](t testing.TB, newCmd func(*cli.Globals, func(context.Context, *O) error) *cobra.Command, revision int64, want string, args ...string) {
	t.Helper()
	if _, err := Parse(t, newCmd, revision, args...); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%v: %v, want an error saying %q", args, err, want)
	}
}
