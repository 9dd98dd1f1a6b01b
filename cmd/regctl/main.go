// Command regctl shows, reads and writes how kube-apiserver stores its API
// in etcd (built-in groups, custom resources, APIServices), using the
// server's own storage code.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/regctl/regctl/internal/cli"
	_ "github.com/regctl/regctl/internal/english"
	"github.com/regctl/regctl/internal/etcdview/embedded"
	_ "github.com/regctl/regctl/internal/gctune"
	"github.com/regctl/regctl/internal/logs"
	"github.com/regctl/regctl/internal/logs/early"
)

// interruptGrace is how long a command has to wind down after Ctrl-C
// before regctl exits anyway.
const interruptGrace = 900 * time.Millisecond

func main() {
	early.Restore()
	// klog starts silent, whatever a package's initialiser set it to (the
	// server's test utilities, linked into test binaries, raise it to 5):
	// -v, parsed with the command line, is what raises it.
	logs.Setup(0, io.Discard)
	// cobra gives every command the flags of pflag.CommandLine, where the
	// server's packages register flags of their own (component-base's
	// --version, which prints the Kubernetes version and quits in a
	// server): regctl serves none of them.
	pflag.CommandLine = pflag.NewFlagSet(os.Args[0], pflag.ContinueOnError)
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
