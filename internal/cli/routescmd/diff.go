package routescmd

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/routes"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/storagemap/wiring"
)

// DiffOptions are the options of `regctl routes diff`.
type DiffOptions struct {
	*cli.Globals
	routes.DiffOptions
	output string
}

// NewDiff is the `regctl routes diff` command; runF, when set, runs
// instead of DiffOptions.Run.
func NewDiff(g *cli.Globals, runF func(context.Context, *DiffOptions) error) *cobra.Command {
	opts := &DiffOptions{Globals: g}
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
			return cli.DiffStatus(false, routes.DiffArgs(args))
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cli.Trouble(err) })
	fs := cmd.Flags()
	fs.StringVarP(&opts.output, "output", "o", string(routes.Text), "Output format: text|json")
	fs.StringSliceVar(&opts.Only, "only", nil, "Count changes in these fields only (comma-separated)")
	fs.StringSliceVar(&opts.Ignore, "ignore", nil, "Do not count changes in these fields (comma-separated)")
	addGroupFlag(fs, &opts.Groups)
	return cli.WithOptions(cmd, opts, runF)
}

// Complete fails as a diff fails on trouble: exit 2.
func (o *DiffOptions) Complete(_ *cobra.Command, args []string) (err error) {
	o.Old, o.New = args[0], args[1]
	o.Output, err = render.ParseFormat(o.output, routes.DiffFormats...)
	o.Informational = o.Verbosity > 0
	return cli.TroubleOf(err)
}

// Validate has nothing to check: the arguments were (Args).
func (o *DiffOptions) Validate() error { return nil }

func (o *DiffOptions) Run(ctx context.Context) error {
	return cli.DiffStatus(routes.Diff(ctx, o.IO, o.DiffOptions, openRoutes(o.Globals)))
}

// openRoutes opens the map from the server flags in g for the routes
// commands, which take only its tables.
func openRoutes(g *cli.Globals) func(context.Context) (*routes.Live, error) {
	return func(ctx context.Context) (*routes.Live, error) {
		session, err := storagemap.Open(ctx, g.SessionConfig())
		if err != nil {
			return nil, err
		}
		describe := func(path string) (render.Sectioned, error) {
			p, err := session.Map.Describe(path)
			return describedPath{p}, err
		}
		return &routes.Live{Table: session.Map.Wired(), HTTPRoutes: session.Map.HTTPRoutes, Describe: describe, Close: session.Close}, nil
	}
}

// addGroupFlag is kubectl api-resources' `--api-group`, with `--group` as
// another name for it.
func addGroupFlag(fs *pflag.FlagSet, groups *[]string) {
	fs.StringSliceVar(groups, "api-group", nil, "Only the routes of these API groups (comma-separated; \"core\" or \"\" for the core group)")
	fs.StringSliceVar(groups, "group", nil, "Another name for --api-group")
	_ = fs.MarkHidden("group")
}

// describedPath prints a path's wiring: its parts as sections, and in
// yaml or json the wiring's own fields.
type describedPath struct{ wiring.Path }

func (d describedPath) Sections(bool) []render.Section {
	var out []render.Section
	for _, p := range d.Parts() {
		out = append(out, render.Section{Title: p.Title, Rows: p.Rows})
	}
	return out
}
