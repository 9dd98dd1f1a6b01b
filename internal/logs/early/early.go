// Package early keeps quiet the etcd client that kube-apiserver's storage
// layer builds. That client's logger is made once, by its package
// initialiser, writing JSON at info level to the process's stderr as it is
// then; ETCD_CLIENT_DEBUG cannot lower the level (a valid value is taken as
// deprecated and replaced by info) and nothing can change the logger later.
// So this package, which only regctl's main package imports and which
// depends on nothing heavy, points os.Stderr at the null device before that
// initialiser runs (Go initialises packages in import-path order once their
// dependencies are done, and this one sorts before k8s.io), and Restore
// gives the process its stderr back when main starts.
//
// With -v 1 or more on the command line nothing is changed: the client then
// logs as it would in kube-apiserver.
package early

import (
	"io"
	"os"

	"github.com/spf13/pflag"
)

var stderr *os.File

func init() {
	if verbosity(os.Args[1:]) > 0 {
		return
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return
	}
	stderr, os.Stderr = os.Stderr, null
}

// Restore gives the process its stderr back; loggers made during package
// initialisation keep the null device.
func Restore() {
	if stderr != nil {
		os.Stderr = stderr
	}
}

// verbosity reads -v from a command line that holds many other flags.
func verbosity(args []string) int {
	fs := pflag.NewFlagSet("early", pflag.ContinueOnError)
	fs.ParseErrorsAllowlist.UnknownFlags = true
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	v := fs.IntP("v", "v", 0, "")
	_ = fs.Parse(args)
	return *v
}
