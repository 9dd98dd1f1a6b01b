// Package logs keeps the libraries regctl runs (klog, grpc) quiet unless the
// user asks for their output with -v.
package logs

import (
	"flag"
	"io"
	"strconv"
	"sync"

	"google.golang.org/grpc/grpclog"
	"k8s.io/klog/v2"
)

var (
	mu sync.Mutex
	// silenced is true once the libraries were set quiet: grpc's logger may
	// only be replaced before grpc runs, so a process that calls Setup more
	// than once (the whole CLI run from tests) sets it quiet once.
	silenced bool
)

// Setup silences klog and grpc at verbosity 0; above that it sends their
// output to w, klog at verbosity v.
func Setup(v int, w io.Writer) {
	mu.Lock()
	defer mu.Unlock()
	if v <= 0 && silenced {
		return
	}
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	_ = fs.Set("v", strconv.Itoa(v))
	if v <= 0 {
		klog.SetOutput(io.Discard)
		grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard, io.Discard, io.Discard))
		silenced = true
		return
	}
	silenced = false
	_ = fs.Set("skip_headers", "false")
	klog.SetOutput(w)
	grpclog.SetLoggerV2(grpclog.NewLoggerV2WithVerbosity(w, w, w, v))
}
