package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/wiring"
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
  regctl routes diff routes.yaml live -o json`,
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
	filter, err := routetable.NewFilter(opts.Only, opts.Ignore)
	if err != nil {
		return exitTrouble(err)
	}
	if opts.Old == "-" && opts.New == "-" {
		return exitTrouble(errors.New("stdin can be only one side of the diff"))
	}
	tables := &tableLoader{opts: opts.globalOptions}
	defer tables.close()
	from, err := tables.load(ctx, opts.Old)
	if err != nil {
		return exitTrouble(err)
	}
	to, err := tables.load(ctx, opts.New)
	if err != nil {
		return exitTrouble(err)
	}
	res := routetable.Compare(from.InGroups(opts.Groups), to.InGroups(opts.Groups), filter)
	res.Old, res.New = opts.Old, opts.New
	return printDiff(opts.globalOptions, opts.Output, res)
}

// tableLoader reads each side of a diff, and builds the live table at most
// once.
type tableLoader struct {
	opts *globalOptions
	live *wiring.Wiring
}

func (l *tableLoader) load(ctx context.Context, arg string) (routetable.RouteTable, error) {
	switch arg {
	case liveTable:
		if l.live == nil {
			w, err := wiring.Build(ctx, l.opts.wiringConfig())
			if err != nil {
				return routetable.RouteTable{}, err
			}
			l.live = w
		}
		return l.live.Table, nil
	case "-":
		return routetable.Load(l.opts.IO.In, "stdin")
	}
	f, err := os.Open(arg)
	if err != nil {
		return routetable.RouteTable{}, fmt.Errorf("reading route table: %w", err)
	}
	defer f.Close()
	return routetable.Load(f, arg)
}

func (l *tableLoader) close() {
	if l.live != nil {
		l.live.Close()
	}
}

// printDiff writes res to Out and turns a difference into exit status 1,
// with nothing more on stderr: the diff is the message.
func printDiff(g *globalOptions, format render.Format, res routetable.Result) error {
	if g.Verbosity <= 0 {
		res = res.WithoutInformational()
	}
	var err error
	if format == render.JSON {
		err = render.Print(g.IO.Out, render.JSON, res)
	} else {
		err = res.WriteText(g.IO.Out)
	}
	if err != nil {
		return exitTrouble(fmt.Errorf("writing the diff: %w", err))
	}
	if !res.Equal {
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
	err := runRoutesDiff(ctx, &routesDiffOptions{
		globalOptions: opts.globalOptions,
		Old:           opts.Check,
		New:           liveTable,
		Groups:        opts.Groups,
		Output:        textFormat,
	})
	var ee *exitError
	if errors.As(err, &ee) && ee.code == 1 {
		fmt.Fprintf(opts.IO.ErrOut, "hint: if the change is intended, regenerate %s with `regctl routes -o yaml > %s` and the same flags\n", opts.Check, opts.Check)
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
