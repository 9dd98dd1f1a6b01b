package restore

import (
	"fmt"
	"io"
	"strings"

	"k8s.io/cli-runtime/pkg/printers"

	"github.com/regctl/regctl/internal/render"
)

// lines says what became of each object as kubectl reports its writes:
// "configmap/app restored" on stdout, kubectl's name printer's kind and
// name with the result after them (and the namespace, as kubectl delete
// says it, in a restore across namespaces); a write that failed on stderr.
type lines struct {
	out, errOut   io.Writer
	dryRun        bool
	allNamespaces bool
	printers      map[string]printers.ResourcePrinter
}

func newLines(out, errOut io.Writer, dryRun, allNamespaces bool) *lines {
	return &lines{out: out, errOut: errOut, dryRun: dryRun, allNamespaces: allNamespaces, printers: map[string]printers.ResourcePrinter{}}
}

func (l *lines) say(e *entry) error {
	if e.quiet {
		return nil
	}
	name := render.NameOnly(e.gvk, e.Namespace, e.Name)
	if e.Result == Failed {
		var b strings.Builder
		p, err := l.printer("")
		if err != nil {
			return err
		}
		if err := p.PrintObj(name, &b); err != nil {
			return err
		}
		l.failed(strings.TrimSpace(b.String()), e.Reason)
		return nil
	}
	op := e.Result
	if l.dryRun && (e.Result == Restored || e.Result == Overwritten) {
		op += " (dry run)"
	}
	if l.allNamespaces && e.Namespace != "" {
		op += " in " + e.Namespace + " namespace"
	}
	switch {
	case len(e.Fields) > 0:
		op += ": " + strings.Join(e.Fields, ", ")
	case e.Reason != "" && e.Result == Restored:
		op += ", " + e.Reason
	case e.Reason != "":
		op += ": " + e.Reason
	}
	p, err := l.printer(op)
	if err != nil {
		return err
	}
	return p.PrintObj(name, l.out)
}

// printer is kubectl's name printer of op, made once per op.
func (l *lines) printer(op string) (printers.ResourcePrinter, error) {
	if p, ok := l.printers[op]; ok {
		return p, nil
	}
	p, err := render.NamePrinter(op)
	if err != nil {
		return nil, err
	}
	if len(l.printers) < 64 {
		l.printers[op] = p
	}
	return p, nil
}

// failed says on stderr that what stands for name was not restored.
func (l *lines) failed(name, reason string) {
	fmt.Fprintf(l.errOut, "error: %s: %s\n", name, reason)
}
