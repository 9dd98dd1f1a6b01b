// Package logs keeps the libraries regctl runs (klog, grpc) quiet unless the
// user asks for their output with -v.
package logs

import (
	"flag"
	"io"
	"strconv"
	"sync"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/grpc/grpclog"
	"k8s.io/klog/v2"
)

var (
	mu sync.Mutex
	// silenced is true once the libraries were set quiet: grpc's logger may
	// only be replaced before grpc runs, so a process that calls Setup more
	// than once (the whole CLI run from tests) sets it quiet once.
	silenced bool
	// etcd is the logger of an embedded etcd: nil at verbosity 0.
	etcd *zap.Logger
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
		etcd = nil
		return
	}
	silenced = false
	// etcd's info lines come by the dozen at each start: warnings at -v 1.
	level := zapcore.WarnLevel
	if v >= 2 {
		level = zapcore.InfoLevel
	}
	etcd = zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()), zapcore.AddSync(w), level))
	_ = fs.Set("skip_headers", "false")
	klog.SetOutput(w)
	grpclog.SetLoggerV2(grpclog.NewLoggerV2WithVerbosity(w, w, w, v))
}

// Etcd is the logger for an etcd embedded in regctl: nil, for silence, at
// verbosity 0, else one writing where klog does.
func Etcd() *zap.Logger {
	mu.Lock()
	defer mu.Unlock()
	return etcd
}
