// Command regctl shows, reads and writes how kube-apiserver stores the core
// API in etcd, using the server's own storage code.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	_ "github.com/regctl/regctl/internal/gctune"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}, os.Args[1:])
	stop()
	os.Exit(code)
}
