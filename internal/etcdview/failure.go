package etcdview

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// startRecording starts etcd on dir, configured by adjust, and says why it
// failed to start when it did. etcd gives up on a data directory it cannot
// use or write (a full disk) with a panic or a fatal log line: while it
// starts, both panic and are recovered here, and etcd's last error line
// is the error; once it runs, see stopped.
func startRecording(dir string, lock *os.File, logger *zap.Logger, adjust func(*embed.Config)) (e *Embedded, err error) {
	failure := &lastFailure{}
	cfg, err := newConfig(dir, failure.logger(logger))
	if err != nil {
		return nil, err
	}
	adjust(cfg)
	defer func() {
		if r := recover(); r != nil {
			e, err = nil, failure.err(r)
		}
	}()
	e, err = start(cfg, lock)
	if err != nil {
		if msg := failure.last(); msg != "" {
			err = fmt.Errorf("%w (%s)", err, msg)
		}
		return nil, err
	}
	failure.running.Store(true)
	return e, nil
}

// errStartFailed stands for an etcd that gave up starting without saying why.
var errStartFailed = errors.New("etcd stopped while starting")

// lastFailure records etcd's last error log line, to say why it stopped,
// and is the hook of etcd's fatal and panic lines.
type lastFailure struct {
	mu  sync.Mutex
	msg string
	// full is whether the last error was a full disk.
	full bool
	// running is set once etcd started: from then on it gives up in one
	// of its own goroutines, where no caller can recover.
	running atomic.Bool
}

// logger tees user (may be nil) with the recorder, which etcd's fatal and
// panic lines end with.
func (f *lastFailure) logger(user *zap.Logger) *zap.Logger {
	core := zapcore.Core(f)
	if user != nil {
		core = zapcore.NewTee(user.Core(), f)
	}
	return zap.New(core, zap.WithFatalHook(f), zap.WithPanicHook(f))
}

func (f *lastFailure) Enabled(l zapcore.Level) bool { return l >= zapcore.ErrorLevel }
func (f *lastFailure) With([]zapcore.Field) zapcore.Core {
	return f
}
func (f *lastFailure) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if f.Enabled(e.Level) {
		return ce.AddCore(e, f)
	}
	return ce
}
func (f *lastFailure) Sync() error { return nil }

func (f *lastFailure) Write(e zapcore.Entry, fields []zapcore.Field) error {
	msg := e.Message
	full := false
	for _, field := range fields {
		if err, ok := field.Interface.(error); ok && field.Type == zapcore.ErrorType && field.Key == "error" {
			msg += ": " + err.Error()
			full = errors.Is(err, syscall.ENOSPC)
		}
	}
	f.mu.Lock()
	f.msg, f.full = msg, full
	f.mu.Unlock()
	return nil
}

// last is etcd's last error line, or "".
func (f *lastFailure) last() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.msg
}

// err is the error of etcd's panic r: its last error line when it logged one.
func (f *lastFailure) err(r any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.msg != "" {
		return errors.New(f.msg)
	}
	if r != nil {
		return fmt.Errorf("%v", r)
	}
	return errStartFailed
}

// OnWrite ends etcd where it gives up, after its line was recorded: by a
// panic while it starts, which startRecording recovers, or by stopped.
func (f *lastFailure) OnWrite(ce *zapcore.CheckedEntry, _ []zapcore.Field) {
	if !f.running.Load() {
		panic(ce.Message)
	}
	f.mu.Lock()
	msg, full := f.msg, f.full
	f.mu.Unlock()
	stopped(msg, full)
}

// stopped ends the process for an etcd that gave up while it ran (a write
// to a full disk), as etcd itself would, but with one line that says why:
// at verbosity 0 nothing else says it, and a panic would be a trace. A
// diff's exit status 1 means "different": an error is 2.
var stopped = func(msg string, full bool) {
	RemoveEmbeddedData()
	writeStopped(os.Stderr, msg, full)
	os.Exit(2)
}

func writeStopped(w io.Writer, msg string, full bool) {
	hint := ""
	if full {
		hint = "; free space on that disk and run the command again"
	}
	fmt.Fprintf(w, "error: the etcd inside regctl stopped: %s%s\n", msg, hint)
}
