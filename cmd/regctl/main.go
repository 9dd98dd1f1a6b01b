// Command regctl shows, reads and writes how kube-apiserver stores its API
// in etcd (built-in groups, custom resources, APIServices), using the
// server's own storage code. Its commands are internal/cli/rootcmd's; this
// is the process around them: exit codes, Ctrl-C and the logs kept quiet.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/cli/rootcmd"
	_ "github.com/regctl/regctl/internal/english"
	"github.com/regctl/regctl/internal/etcdview/embedded"
	_ "github.com/regctl/regctl/internal/gctune"
	"github.com/regctl/regctl/internal/logs"
	"github.com/regctl/regctl/internal/logs/early"
	"github.com/regctl/regctl/internal/render"
)

// interruptGrace is how long a command has to wind down after Ctrl-C
// before regctl exits anyway.
const interruptGrace = 900 * time.Millisecond

// errInterrupted is the cause of the context when the user pressed Ctrl-C.
var errInterrupted = errors.New("interrupted")

// exitInterrupted is what a shell reports for a command ended by SIGINT.
const exitInterrupted = 130

func main() {
	early.Restore()
	// klog starts silent, whatever a package's initialiser set it to (the
	// server's test utilities, linked into test binaries, raise it to 5):
	// -v, parsed with the command line, is what raises it.
	logs.Setup(0, io.Discard)
	rootcmd.DropGlobalFlags()
	ctx, cancel := context.WithCancelCause(context.Background())
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-signals
		cancel(errInterrupted)
		// A second Ctrl-C, or a command still busy after the grace
		// period, ends the process; an ephemeral etcd's data goes with it.
		select {
		case <-signals:
		case <-time.After(interruptGrace):
		}
		embedded.RemoveData()
		fmt.Fprintln(os.Stderr, "error: interrupted")
		os.Exit(exitInterrupted)
	}()
	go exitWhenEtcdStops(embedded.Stops(), os.Stderr, os.Exit)
	code := Run(ctx, cli.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}, os.Args[1:])
	os.Exit(code)
}

// exitWhenEtcdStops ends the process when an etcd inside it gives up while
// it runs (a write to a full disk): it serves nothing more, and the
// command would wait for it until its timeout. As etcd would, but with its
// one line; a diff's exit status 1 means "different", so an error is 2.
// The write that failed was not acknowledged.
func exitWhenEtcdStops(stops <-chan error, errOut io.Writer, exit func(int)) {
	err := <-stops
	embedded.RemoveData()
	fmt.Fprintf(errOut, "error: %v\n", err)
	exit(2)
}

// Run runs regctl with args and returns the process exit code. The whole CLI
// is callable from tests with buffers for streams. A panic never reaches
// the user as a trace: it is one line that says it is a bug.
func Run(ctx context.Context, streams cli.IOStreams, args []string) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(streams.ErrOut, "error: regctl bug: %s; please report it with the command that caused it\n", render.OneLine(fmt.Errorf("%v", r)))
			code = 1
		}
	}()
	out := &printed{w: streams.Out}
	streams.Out = out
	root, g := rootcmd.New(streams)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if errors.Is(context.Cause(ctx), errInterrupted) {
		report(streams.ErrOut, interrupted(err, out.any), nil)
		return exitInterrupted
	}
	if err == nil {
		return 0
	}
	err = g.Explain(err)
	var ee *cli.ExitError
	if errors.As(err, &ee) {
		report(streams.ErrOut, ee.Err, nil)
		return ee.Code
	}
	report(streams.ErrOut, err, nil)
	return 1
}

// interrupted is what a command stopped by Ctrl-C says last, whatever it
// was doing: its own account when it gives one ("restore interrupted: 512
// objects written; ..."), otherwise that it was interrupted, and, when it
// printed something and was cut short, that what it printed is partial. A
// read cut short by the cancelled context ("listing configmaps: context
// canceled") is no account; a command that ends cleanly at an interrupt
// (a watch, which runs until it) printed all there was.
func interrupted(err error, printedSome bool) error {
	var ee *cli.ExitError
	if errors.As(err, &ee) {
		err = ee.Err
	}
	switch {
	case err != nil && strings.Contains(err.Error(), "interrupted"):
		return err
	case err != nil && printedSome:
		return errors.New("interrupted: what was printed is partial")
	}
	return errInterrupted
}

// printed is the standard output of a command, which says whether the
// command printed anything.
type printed struct {
	w   io.Writer
	any bool
}

func (p *printed) Write(b []byte) (int, error) {
	p.any = p.any || len(b) > 0
	return p.w.Write(b)
}

// report prints the error line, or fallback when the error says nothing.
func report(w io.Writer, err, fallback error) {
	var ee *cli.ExitError
	if errors.As(err, &ee) {
		err = ee.Err
	}
	if err == nil {
		err = fallback
	}
	if err != nil {
		fmt.Fprintf(w, "error: %s\n", render.OneLine(err))
	}
}
