package render

import (
	"context"
	"io"

	"k8s.io/apiserver/pkg/warning"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/rest"
)

// WithWarnings gives the context of a command that does what a kubectl
// command does (get, create, replace, delete) a warning recorder: what the
// server's code warns of while the command reads or writes (a deprecated
// kind, a strategy's WarningsOnCreate...) is printed on errOut as kubectl
// prints the warning headers of the server's responses, with the warning
// writer kubectl sets up (NewKubectlCommand): "Warning: TEXT", each text
// once.
func WithWarnings(ctx context.Context, errOut io.Writer) context.Context {
	w := rest.NewWarningWriter(errOut, rest.WarningWriterOptions{Deduplicate: true, Color: printers.AllowsColorOutput(errOut)})
	return warning.WithWarningRecorder(ctx, warningPrinter{w})
}

// warningPrinter hands each warning added to a request's context to a
// client's warning handler, as a response would carry it.
type warningPrinter struct{ handler rest.WarningHandler }

// AddWarning passes the warning on with code 299, the code the server's
// recorder (filters.WithWarningRecorder) gives every warning header and the
// only one client-go's handlers print.
func (p warningPrinter) AddWarning(agent, text string) {
	p.handler.HandleWarningHeader(299, agent, text)
}
