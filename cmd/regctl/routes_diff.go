package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/storagemap"
)

// liveTable names, as a diff side, the table this regctl builds from the
// given kube-apiserver flags.
const liveTable = "live"

// textFormat is the diff's human listing.
const textFormat render.Format = "text"

var routesDiffFormats = []render.Format{textFormat, render.JSON}

type routesDiffOptions struct {
	*globalOptions
	Old, New string
	Only     []string
	Ignore   []string
	// Groups keeps only the routes of these API groups on both sides.
	Groups []string
	Output render.Format
	// http says the sides must be HTTP route tables (`routes --http
	// --check`).
	http bool
}

// exitTrouble makes err exit 2: like diff(1), a difference exits 1 and
// trouble 2, so that CI can tell a changed wiring from a broken job.
func exitTrouble(err error) error { return &exitError{code: 2, err: err} }

func newRoutesDiffCmd(g *globalOptions, runF func(context.Context, *routesDiffOptions) error) *cobra.Command {
	opts := &routesDiffOptions{globalOptions: g}
	var output string
	cmd := &cobra.Command{
		Use:   "diff OLD NEW [--only FIELD,...] [--ignore FIELD,...] [-o text|json]",
		Short: "Compare two route tables and print what changed in the storage wiring",
		Long: `Compare two route tables and print the routes added, removed and changed,
field by field, sorted by path.

Each side is a file written by ` + "`regctl routes -o yaml|json`" + `, - for stdin, or
live for the table this regctl builds from the given kube-apiserver flags
(write ./live for a file of that name).

HTTP route tables, written by ` + "`regctl routes --http -o yaml|json`" + `, compare
the same way, route by method and path; a file says which kind of table it
is, and live is built of the other side's kind. Both sides are of one kind.

--only and --ignore choose which fields count; added and removed routes always
count. Changes in fields that do not count are listed, marked informational,
with -v 1.

Exit status: 0 when the tables are equal, 1 when they differ, 2 on error.`,
		Example: `  # Exit 0: turning off the watch cache for secrets changes nothing but
  # decorators (drop --ignore to see the diff and exit 1)
  regctl routes -o yaml > routes.yaml
  regctl routes diff routes.yaml live --watch-cache-sizes=secrets#0 --ignore decorator

  # Two committed tables, yaml or json; only key prefixes and storage
  # versions count
  regctl routes -o json > routes.json
  regctl routes diff routes.yaml routes.json --only keyPrefix,storageVersion

  # As data
  regctl routes diff routes.yaml live -o json

  # The HTTP routes: exit 0 unless the server's routes changed
  regctl routes --http -o yaml > http-routes.yaml
  regctl routes diff http-routes.yaml live --ignore storage`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				noun := "arguments"
				if len(args) == 1 {
					noun = "argument"
				}
				return exitTrouble(fmt.Errorf("want two route tables, OLD and NEW, got %d %s", len(args), noun))
			}
			return nil
		},
		PreRunE: func(cmd *cobra.Command, args []string) error {
			f, err := render.ParseFormat(output, routesDiffFormats...)
			if err != nil {
				return exitTrouble(err)
			}
			opts.Output = f
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Old, opts.New = args[0], args[1]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runRoutesDiff(cmd.Context(), opts)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return exitTrouble(err) })
	fs := cmd.Flags()
	fs.StringVarP(&output, "output", "o", string(textFormat), "Output format: text|json")
	fs.StringSliceVar(&opts.Only, "only", nil, "Count changes in these fields only (comma-separated)")
	fs.StringSliceVar(&opts.Ignore, "ignore", nil, "Do not count changes in these fields (comma-separated)")
	addGroupFlag(fs, &opts.Groups)
	return cmd
}

func runRoutesDiff(ctx context.Context, opts *routesDiffOptions) error {
	_, err := diffTables(ctx, opts)
	return err
}

// diffTables prints the diff and tells whether the tables were HTTP route
// tables.
func diffTables(ctx context.Context, opts *routesDiffOptions) (http bool, err error) {
	tables := &tableLoader{opts: opts.globalOptions}
	defer tables.close()
	from, to, http, filter, err := loadSides(ctx, opts, tables)
	if err != nil {
		return false, exitTrouble(err)
	}
	if http {
		keep := routetable.HTTPFilter{Groups: opts.Groups}
		res := routetable.CompareHTTP(from.HTTP.Filter(keep), to.HTTP.Filter(keep), filter)
		res.Old, res.New = opts.Old, opts.New
		if opts.Verbosity <= 0 {
			res = res.WithoutInformational()
		}
		return true, printDiff(opts.globalOptions, opts.Output, res, res.Equal)
	}
	res := routetable.Compare(from.Storage.InGroups(opts.Groups), to.Storage.InGroups(opts.Groups), filter)
	res.Old, res.New = opts.Old, opts.New
	if opts.Verbosity <= 0 {
		res = res.WithoutInformational()
	}
	return false, printDiff(opts.globalOptions, opts.Output, res, res.Equal)
}

// loadSides reads both sides of a diff and the filter of their kind. The
// files come first: they say which kind of table the live side is, and
// which fields --only and --ignore may name, before the map is built.
func loadSides(ctx context.Context, opts *routesDiffOptions, tables *tableLoader) (from, to routetable.Document, http bool, filter routetable.Filter, err error) {
	if opts.Old == "-" && opts.New == "-" {
		return from, to, false, filter, errors.New("stdin can be only one side of the diff")
	}
	if from, err = tables.read(opts.Old); err != nil {
		return
	}
	if to, err = tables.read(opts.New); err != nil {
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
	if filter, err = newFilter(opts.Only, opts.Ignore); err != nil {
		return
	}
	if from, err = tables.live(ctx, from, http); err != nil {
		return
	}
	to, err = tables.live(ctx, to, http)
	return
}

// sameKind tells whether the two sides are HTTP route tables: both are
// tables of one kind, and live is the kind of the other side (a route
// table when both are live).
func sameKind(opts *routesDiffOptions, from, to routetable.Document) (bool, error) {
	if from.Storage == nil && from.HTTP == nil {
		return to.HTTP != nil, nil
	}
	if to.Storage == nil && to.HTTP == nil {
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

// tableLoader reads each side of a diff, and builds the live table at most
// once.
type tableLoader struct {
	opts *globalOptions
	w    *storagemap.Session
}

// read reads the file arg names, or stdin; live is left empty for the
// live method to fill once the kind of the diff is known.
func (l *tableLoader) read(arg string) (routetable.Document, error) {
	switch arg {
	case liveTable:
		return routetable.Document{}, nil
	case "-":
		return routetable.LoadDocument(l.opts.IO.In, "stdin")
	}
	f, err := os.Open(arg)
	if err != nil {
		return routetable.Document{}, fmt.Errorf("reading route table: %w", err)
	}
	defer f.Close()
	return routetable.LoadDocument(f, arg)
}

// live fills a live side with the table this regctl builds, of the kind
// given.
func (l *tableLoader) live(ctx context.Context, d routetable.Document, http bool) (routetable.Document, error) {
	if d.Storage != nil || d.HTTP != nil {
		return d, nil
	}
	if l.w == nil {
		w, err := storagemap.Open(ctx, l.opts.sessionConfig())
		if err != nil {
			return d, err
		}
		l.w = w
	}
	if !http {
		return routetable.Document{Storage: &l.w.Map.Table}, nil
	}
	t, err := l.w.Map.HTTPRoutes()
	return routetable.Document{HTTP: &t}, err
}

func (l *tableLoader) close() {
	if l.w != nil {
		l.w.Close()
	}
}

// printDiff writes res to Out and turns a difference into exit status 1,
// with nothing more on stderr: the diff is the message.
func printDiff(g *globalOptions, format render.Format, res interface{ WriteText(io.Writer) error }, equal bool) error {
	var err error
	if format == render.JSON {
		err = render.Print(g.IO.Out, render.JSON, res)
	} else {
		err = res.WriteText(g.IO.Out)
	}
	if err != nil {
		return exitTrouble(fmt.Errorf("writing the diff: %w", err))
	}
	if !equal {
		return &exitError{code: 1}
	}
	return nil
}

// checkRoutes is `routes diff FILE live` with every field counted, plus a
// hint on how to bring the committed table up to date.
func checkRoutes(ctx context.Context, opts *routesOptions) error {
	if opts.Output != render.Table {
		return exitTrouble(errors.New("`--check` prints a diff and takes no `-o`: for data, use `regctl routes diff FILE live -o json`"))
	}
	if len(opts.Resources) > 0 || len(opts.Verbs) > 0 {
		return exitTrouble(errors.New("`--check` compares whole tables, or groups of them: `--resource` and `--verb` are for printing"))
	}
	http, err := diffTables(ctx, &routesDiffOptions{
		globalOptions: opts.globalOptions,
		Old:           opts.Check,
		New:           liveTable,
		Groups:        opts.Groups,
		Output:        textFormat,
		http:          opts.HTTP,
	})
	var ee *exitError
	if errors.As(err, &ee) && ee.code == 1 {
		command := "regctl routes"
		if http {
			command += " --http"
		}
		fmt.Fprintf(opts.IO.ErrOut, "hint: if the change is intended, regenerate %s with `%s -o yaml > %s` and the same flags\n", opts.Check, command, opts.Check)
	}
	return err
}

// addGroupFlag is kubectl api-resources' `--api-group`, with `--group` as
// another name for it.
func addGroupFlag(fs *pflag.FlagSet, groups *[]string) {
	fs.StringSliceVar(groups, "api-group", nil, "Only the routes of these API groups (comma-separated; \"core\" or \"\" for the core group)")
	fs.StringSliceVar(groups, "group", nil, "Another name for --api-group")
	_ = fs.MarkHidden("group")
}
