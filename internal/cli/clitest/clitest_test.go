package clitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/spf13/cobra"

	"github.com/regctl/regctl/internal/cli"
)

type options struct {
	*cli.Globals
	name string
	ran  bool
}

func (o *options) Complete(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		o.name = args[0]
	}
	return nil
}

func (o *options) Validate() error {
	if o.name == "bad" {
		return errors.New("the name bad is refused")
	}
	return nil
}

func (o *options) Run(context.Context) error { o.ran = true; return nil }

func newCmd(g *cli.Globals, runF func(context.Context, *options) error) *cobra.Command {
	return cli.WithOptions(&cobra.Command{Use: "x"}, &options{Globals: g}, runF)
}

// TestParseKeepsTheOptionsAndRunsNothing: the options come back
// completed, with the globals' revision; a refusal returns none.
func TestParseKeepsTheOptionsAndRunsNothing(t *testing.T) {
	o, err := Parse(t, newCmd, 7, "pods")
	if err != nil || o == nil || o.name != "pods" || o.Revision != 7 || o.ran {
		t.Fatalf("options %+v, %v: want pods at revision 7, not run", o, err)
	}
	if o, err := Parse(t, newCmd, 0, "bad"); o != nil || err == nil {
		t.Errorf("a refused name: %+v, %v", o, err)
	}
	Refused(t, newCmd, 0, "is refused", "bad")
}

// TestParseAtGivesATimeNotTold: the options see the time as given, and no
// revision: nothing tells it without an etcd.
func TestParseAtGivesATimeNotTold(t *testing.T) {
	o, err := ParseAt(t, newCmd, "90m", "pods")
	if err != nil || o.Revision != 0 || o.RevisionTime.Text != "90m" || !o.RevisionGiven() {
		t.Fatalf("options %+v, %v: want the time 90m, no revision", o, err)
	}
	RefusedAt(t, newCmd, "2026-11-29T14:00:00Z", "is refused", "bad")
}

// TestEtcdIsARealOneTheGlobalsName: ParseOn hands the command the globals
// of Etcd, which name its etcd and write where the test reads.
func TestEtcdIsARealOneTheGlobalsName(t *testing.T) {
	var out bytes.Buffer
	g, c := Etcd(t, &out, io.Discard)
	Put(t, c, "/registry/configmaps/shop/app", "v")
	if got := string(Value(t, c, "/registry/configmaps/shop/app")); got != "v" {
		t.Errorf("the value put reads back as %q", got)
	}
	if Value(t, c, "/registry/configmaps/shop/none") != nil {
		t.Error("a key never put has a value")
	}
	o, err := ParseOn(t, newCmd, g, "pods")
	if err != nil || o.Globals != g || !o.SessionConfig().EtcdGiven() {
		t.Fatalf("options %+v, %v: want the globals given, naming an etcd", o, err)
	}
	fmt.Fprint(o.IO.Out, "printed")
	if out.String() != "printed" {
		t.Errorf("the command's output went elsewhere: %q", out.String())
	}
}
