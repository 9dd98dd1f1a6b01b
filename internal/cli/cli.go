// Package cli is what regctl's commands share on the command line: the
// global flags and the session config they make (Globals), the shape of a
// command's options (Complete, Validate, Run), exit codes, and the flags of
// more than one command. Each command is a package of its own beside it
// (getcmd, createcmd, ...), as kubectl's are, and makes its one call into a
// library; cmd/regctl puts them under the root command.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/regctl/regctl/internal/clock"
	"github.com/regctl/regctl/internal/completion"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
)

// IOStreams are kubectl's streams a command reads and writes: data goes to
// Out, progress and warnings to ErrOut.
type IOStreams = genericiooptions.IOStreams

// Globals are the flags shared by every command: kube-apiserver's storage
// flags, verbosity and the request timeout.
type Globals struct {
	IO             IOStreams
	Server         *serverflags.Options
	Verbosity      int
	RequestTimeout time.Duration
	// Manifest is a kube-apiserver static Pod manifest to take the
	// server's flags from, ManifestRoot where the files it names are.
	Manifest, ManifestRoot string
	// Snapshot is an etcd snapshot file read instead of a live etcd.
	Snapshot string
	// Revision is the etcd revision reads see the keyspace at; 0 is now.
	// RevisionTime is the time `--revision` gave instead of a number,
	// which TellRevision makes Revision.
	Revision     int64
	RevisionTime clock.Time
	// DataDir is the sandbox's data directory: an etcd of regctl's own.
	DataDir string
	// ReleaseMismatch is what writes do on a cluster of another
	// Kubernetes release: storagemap.MismatchRefuse or MismatchIgnore.
	ReleaseMismatch string

	// warned are the warnings said already: one command may open more
	// than one session, and says each once.
	warned map[string]bool
}

// SessionConfig is what a command opens its session with (storagemap.Open).
func (g *Globals) SessionConfig() storagemap.Config {
	return storagemap.Config{Options: g.Server, Timeout: g.RequestTimeout, Snapshot: g.Snapshot, DataDir: g.DataDir,
		ReleaseMismatch: g.ReleaseMismatch, Warn: g.warn, Note: g.note}
}

// warn prints a warning on stderr, once per command.
func (g *Globals) warn(text string) {
	if g.warned[text] {
		return
	}
	if g.warned == nil {
		g.warned = map[string]bool{}
	}
	g.warned[text] = true
	fmt.Fprintf(g.IO.ErrOut, "warning: %s\n", text)
}

// Explain adds to err what to do when it is about the flags rather than the
// data: a file a kube-apiserver manifest names, which is where it is on the
// server's node, not on this machine.
func (g *Globals) Explain(err error) error {
	var missing *fs.PathError
	if g.Manifest == "" || !errors.As(err, &missing) || !errors.Is(missing.Err, fs.ErrNotExist) || !g.Server.FromManifest(missing.Path) {
		return err
	}
	if g.ManifestRoot != "" {
		return fmt.Errorf("%w: `--manifest-root` %s holds no copy of the node's %s", err, g.ManifestRoot, strings.TrimPrefix(missing.Path, filepath.Clean(g.ManifestRoot)))
	}
	return fmt.Errorf("%w: the apiserver manifest names the file as it is on its node; copy the node's files (its /etc/kubernetes as DIR/etc/kubernetes) and give `--manifest-root DIR`", err)
}

// note says on stderr what the command did besides what it was asked.
func (g *Globals) note(text string) { fmt.Fprintf(g.IO.ErrOut, "note: %s\n", text) }

// CompletionFlags hands shell completion (internal/completion) the flags
// typed so far, which cobra parses into g before it completes. Completion
// warns of nothing: the shell would show it as a candidate.
func (g *Globals) CompletionFlags() completion.Flags {
	cfg := g.SessionConfig()
	cfg.Warn = nil
	return completion.Flags{Config: cfg, Verbosity: g.Verbosity, EtcdGiven: cfg.EtcdGiven()}
}

// Options is the shape of every command's options, as kubectl's, one
// meaning each: Complete fills in and derives what the command line gives
// beyond the flags bound to it (its arguments parsed, formats, which flags
// were given), and fails only where that parsing does; Validate checks all
// of it before any etcd is touched, writing nothing to the options
// (TestValidateOnlyChecks); Run makes the command's one call into a
// library.
type Options interface {
	Complete(cmd *cobra.Command, args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// WithOptions makes cmd complete, validate and run o. runF, when set, is
// called instead of Run, with o completed and valid: tests read a
// command's options so, without an etcd.
func WithOptions[O Options](cmd *cobra.Command, o O, runF func(context.Context, O) error) *cobra.Command {
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		if err := o.Complete(cmd, args); err != nil {
			return err
		}
		return o.Validate()
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if runF != nil {
			return runF(cmd.Context(), o)
		}
		return o.Run(cmd.Context())
	}
	return cmd
}

// ExitError is how a command exits otherwise than with its error and exit
// code 1: with another code (a diff's 2), or with code 1 and nothing more
// to say (Err nil: what failed was reported already, or a diff found
// differences). Every other error exits 1 with its line.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Trouble makes err exit 2: like diff(1), a difference exits 1 and
// trouble 2, so that CI can tell a changed wiring from a broken job.
func Trouble(err error) error { return &ExitError{Code: 2, Err: err} }

// TroubleOf is err as trouble (exit 2), nil as nil.
func TroubleOf(err error) error {
	if err != nil {
		return Trouble(err)
	}
	return nil
}

// DiffStatus is how a diff exits: 1 with nothing more on stderr when the
// two sides differ (the diff is the message), 2 on trouble.
func DiffStatus(differ bool, err error) error {
	if err != nil {
		return Trouble(err)
	}
	if differ {
		return &ExitError{Code: 1}
	}
	return nil
}
