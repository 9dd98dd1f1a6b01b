package changes

import (
	"context"
	"errors"
	"fmt"
	"io"

	"k8s.io/utils/exec"

	"github.com/regctl/regctl/internal/gctune"
	"github.com/regctl/regctl/internal/render"
)

// ErrDiffer is what a comparison that found differences returns, once it
// has printed them: the command exits 1, as diff(1) does.
var ErrDiffer = errors.New("the two sides differ")

// Print compares req and prints the report in output on out, or with
// patch the diff of each object that differs, as the patch's diff
// program writes it. It returns ErrDiffer when something differs.
func Print(ctx context.Context, out io.Writer, req Request, output render.Format, patch *Patch) error {
	// Two pages are live at a time; the rest is garbage.
	gctune.BoundHeap()
	if patch != nil {
		defer patch.Close()
		req.Changed = patch.Add
	}
	report, err := Compare(ctx, req)
	if err != nil {
		return err
	}
	if patch != nil {
		err := patch.Run()
		var exit exec.ExitError
		switch {
		case errors.As(err, &exit) && exit.ExitStatus() == 1:
			err = nil
		case err != nil:
			return err
		}
	} else if err := render.Print(out, output, report); err != nil {
		return err
	}
	if n := len(report.Unreadable); n > 0 {
		// What could be read is compared and printed; the exit code
		// still says that not everything could be.
		return fmt.Errorf("%d %s could not be read on one side: %s", n, render.Plural(n, "object", "objects"), report.unreadableList())
	}
	if report.Differ() {
		return ErrDiffer
	}
	return nil
}
