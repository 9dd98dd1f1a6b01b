package embedded

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// startRecording starts etcd on dir, configured by adjust, and says why it
// failed to start when it did. etcd gives up on a data directory it cannot
// use or write (a full disk) with a panic or a fatal log line, in the
// goroutine that starts it or in one of its own; lastFailure ends that
// goroutine instead, and etcd's last error line is the error. Once it
// runs, see stopped.
func startRecording(dir string, lock *os.File, logger *zap.Logger, adjust func(*embed.Config)) (*Etcd, error) {
	failure := &lastFailure{gaveUp: make(chan struct{})}
	cfg, err := newConfig(dir, failure.logger(logger))
	if err != nil {
		return nil, err
	}
	adjust(cfg)
	e, err := start(cfg, lock, failure.gaveUp)
	if err == nil && !failure.run() {
		// It gave up as it became ready, and is not closed (see start).
		e, err = nil, errGaveUp
	}
	if errors.Is(err, errGaveUp) {
		return nil, failure.err()
	}
	if err != nil {
		if msg := failure.last(); msg != "" {
			err = fmt.Errorf("%w (%s)", err, msg)
		}
		return nil, err
	}
	return e, nil
}

// errGaveUp is start's error for an etcd that gave up; failure.err says why.
var errGaveUp = errors.New("etcd gave up starting")

// gaveUpError is the error of an etcd that gave up starting: its last
// error line. Starting it again would fail again.
type gaveUpError struct{ line string }

func (g gaveUpError) Error() string { return g.line }

// lastFailure records etcd's last error log line, to say why it stopped,
// and is the hook of etcd's fatal and panic lines.
type lastFailure struct {
	mu  sync.Mutex
	msg string
	// full is whether the last error was a full disk.
	full bool
	// running is set once etcd started: from then on, giving up ends the
	// process (stopped). quit is set when it gave up before, and gaveUp
	// closed.
	running, quit bool
	gaveUp        chan struct{}
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

// run marks etcd running, unless it gave up already.
func (f *lastFailure) run() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.running = !f.quit
	return f.running
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

// err is the error of an etcd that gave up starting.
func (f *lastFailure) err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.msg != "" {
		return gaveUpError{f.msg}
	}
	return gaveUpError{"etcd stopped while starting"}
}

// OnWrite ends etcd where it gives up, after its line was recorded: once
// it runs, by telling Stops; while it starts, by telling start. Either way
// it ends the goroutine etcd gave up in, which no caller could recover from
// a panic, and which etcd's code expects never to go on.
func (f *lastFailure) OnWrite(*zapcore.CheckedEntry, []zapcore.Field) {
	f.mu.Lock()
	if f.running {
		err := &StoppedError{Msg: f.msg, Full: f.full}
		f.mu.Unlock()
		select {
		case stops <- err:
		default: // another etcd of this process told it first
		}
		runtime.Goexit()
	}
	if !f.quit {
		f.quit = true
		close(f.gaveUp)
	}
	f.mu.Unlock()
	runtime.Goexit()
}

// stops hears of the first etcd of the process that gave up while it ran.
var stops = make(chan error, 1)

// Stops tells of an etcd inside this process that gave up while it ran (a
// write to a full disk): it serves nothing any more, and what waits on it
// waits until its timeout. The command ends then, as etcd itself would,
// with the error's one line: at verbosity 0 nothing else says it, and a
// panic would be a trace.
func Stops() <-chan error { return stops }

// StoppedError is the error of an etcd that gave up while it ran: its last
// error line, and whether it was a full disk.
type StoppedError struct {
	Msg  string
	Full bool
}

func (e *StoppedError) Error() string {
	hint := ""
	if e.Full {
		hint = "; free space on that disk and run the command again"
	}
	return fmt.Sprintf("the etcd inside regctl stopped: %s%s", e.Msg, hint)
}
