package routes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/routetable"
)

// LiveSide names, as a diff side, the table this regctl builds from the
// given kube-apiserver flags.
const LiveSide = "live"

// Text is the diff's human listing.
const Text render.Format = "text"

// DiffFormats are those a diff prints in.
var DiffFormats = []render.Format{Text, render.JSON}

// DiffOptions say which tables to compare and what counts.
type DiffOptions struct {
	// Old and New are the sides: a file, "-" for stdin, or LiveSide.
	Old, New string
	// Only and Ignore choose the fields that count, as
	// routetable.NewFilter takes them.
	Only   []string
	Ignore []string
	// Groups keeps only the routes of these API groups on both sides.
	Groups []string
	// Output is Text or render.JSON.
	Output render.Format
	// Informational lists the changes in fields that do not count, marked
	// so, instead of leaving them out.
	Informational bool

	// http says the sides must be HTTP route tables (`routes --http
	// --check`).
	http bool
}

// Diff writes to Out what changed from opts.Old to opts.New, and tells
// whether they differ. An error is trouble (a side that could not be read or
// built, a diff that could not be written), which the command tells from a
// difference as diff(1) does: so that CI can tell a changed wiring from a
// broken job.
func Diff(ctx context.Context, streams genericiooptions.IOStreams, opts DiffOptions, open Open) (differ bool, err error) {
	_, differ, err = diff(ctx, streams, opts, open)
	return differ, err
}

// CheckOptions say which committed table to check against the live one.
type CheckOptions struct {
	// File is the committed table: a file, or "-" for stdin.
	File string
	// Groups keeps only the routes of these API groups on both sides.
	Groups []string
	// HTTP says File must be an HTTP route table.
	HTTP bool
}

// Check is a diff of the committed table against the live one with every
// field counted, followed on ErrOut, when they differ, by a hint on how to
// bring the committed table up to date.
func Check(ctx context.Context, streams genericiooptions.IOStreams, opts CheckOptions, open Open) (differ bool, err error) {
	http, differ, err := diff(ctx, streams, DiffOptions{Old: opts.File, New: LiveSide, Groups: opts.Groups, Output: Text, http: opts.HTTP}, open)
	if err == nil && differ {
		command := "regctl routes"
		if http {
			command += " --http"
		}
		fmt.Fprintf(streams.ErrOut, "hint: if the change is intended, regenerate %s with `%s -o yaml > %s` and the same flags\n", opts.File, command, opts.File)
	}
	return differ, err
}

// diff writes the diff and tells whether the tables were HTTP route tables,
// for the hint, and whether they differ.
func diff(ctx context.Context, streams genericiooptions.IOStreams, opts DiffOptions, open Open) (http, differ bool, err error) {
	from, to, http, filter, err := readSides(streams.In, opts)
	if err != nil {
		return false, false, err
	}
	// The map is built once at most, when a side is live, and released
	// once the diff is written.
	if isLive(from) || isLive(to) {
		live, err := open(ctx)
		if err != nil {
			return false, false, err
		}
		defer live.Close()
		if from, err = fill(live, from, http); err != nil {
			return false, false, err
		}
		if to, err = fill(live, to, http); err != nil {
			return false, false, err
		}
	}
	if http {
		keep := routetable.HTTPFilter{Groups: opts.Groups}
		res := routetable.CompareHTTP(from.HTTP.Filter(keep), to.HTTP.Filter(keep), filter)
		res.Old, res.New = opts.Old, opts.New
		if !opts.Informational {
			res = res.WithoutInformational()
		}
		return true, !res.Equal, write(streams.Out, opts.Output, res)
	}
	res := routetable.Compare(from.Storage.InGroups(opts.Groups), to.Storage.InGroups(opts.Groups), filter)
	res.Old, res.New = opts.Old, opts.New
	if !opts.Informational {
		res = res.WithoutInformational()
	}
	return false, !res.Equal, write(streams.Out, opts.Output, res)
}

// readSides reads the files of a diff and the filter of their kind. The
// files come first: they say which kind of table the live side is, and
// which fields --only and --ignore may name, before the map is built.
func readSides(in io.Reader, opts DiffOptions) (from, to routetable.Document, http bool, filter routetable.Filter, err error) {
	if opts.Old == "-" && opts.New == "-" {
		return from, to, false, filter, errors.New("stdin can be only one side of the diff")
	}
	if from, err = read(in, opts.Old); err != nil {
		return
	}
	if to, err = read(in, opts.New); err != nil {
		return
	}
	if http, err = sameKind(opts, from, to); err != nil {
		return
	}
	if opts.http && !http {
		err = fmt.Errorf("%s is a route table: `--http --check` takes an HTTP route table (write one with `regctl routes --http -o yaml`)", opts.Old)
		return
	}
	newFilter := routetable.NewFilter
	if http {
		newFilter = routetable.NewHTTPFilter
	}
	filter, err = newFilter(opts.Only, opts.Ignore)
	return
}

// read reads the table arg names, a file or stdin; the live side is left
// empty, to be built once the kind of the diff is known.
func read(in io.Reader, arg string) (routetable.Document, error) {
	switch arg {
	case LiveSide:
		return routetable.Document{}, nil
	case "-":
		return routetable.LoadDocument(in, "stdin")
	}
	f, err := os.Open(arg)
	if err != nil {
		return routetable.Document{}, fmt.Errorf("reading route table: %w", err)
	}
	defer f.Close()
	return routetable.LoadDocument(f, arg)
}

// isLive tells the live side, left empty by read.
func isLive(d routetable.Document) bool { return d.Storage == nil && d.HTTP == nil }

// sameKind tells whether the two sides are HTTP route tables: both are
// tables of one kind, and live is the kind of the other side (a route
// table when both are live).
func sameKind(opts DiffOptions, from, to routetable.Document) (bool, error) {
	if isLive(from) {
		return to.HTTP != nil, nil
	}
	if isLive(to) {
		return from.HTTP != nil, nil
	}
	if (from.HTTP != nil) != (to.HTTP != nil) {
		return false, fmt.Errorf("%s is %s and %s %s: compare two tables of one kind", opts.Old, kindName(from), opts.New, kindName(to))
	}
	return from.HTTP != nil, nil
}

func kindName(d routetable.Document) string {
	if d.HTTP != nil {
		return "an HTTP route table"
	}
	return "a route table"
}

// fill makes a live side the live table of the kind given.
func fill(live *Live, d routetable.Document, http bool) (routetable.Document, error) {
	if !isLive(d) {
		return d, nil
	}
	if !http {
		return routetable.Document{Storage: &live.Table}, nil
	}
	t, err := live.HTTPRoutes()
	return routetable.Document{HTTP: &t}, err
}

// write writes res as text, or as JSON for scripts: equal tables still
// give a document they can parse.
func write(w io.Writer, format render.Format, res interface{ WriteText(io.Writer) error }) error {
	var err error
	if format == render.JSON {
		err = render.Print(w, render.JSON, res)
	} else {
		err = res.WriteText(w)
	}
	if err != nil {
		return fmt.Errorf("writing the diff: %w", err)
	}
	return nil
}

// DiffArgs checks a diff's arguments: two tables, OLD and NEW.
func DiffArgs(args []string) error {
	if len(args) == 2 {
		return nil
	}
	noun := "arguments"
	if len(args) == 1 {
		noun = "argument"
	}
	return fmt.Errorf("want two route tables, OLD and NEW, got %d %s", len(args), noun)
}
