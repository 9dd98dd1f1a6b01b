// Package routes is what `regctl routes` does once its flags are read:
// print the live route table or its HTTP routes, compare two route tables
// (files, stdin, or the live one) and check a committed table against the
// live one. The live tables come from a function the command builds on the
// storage map, so that this package links nothing of the map's assembly.
package routes

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/routetable"
)

// Formats are those `regctl routes` prints a table in.
var Formats = []render.Format{render.Table, render.Wide, render.YAML, render.JSON}

// Live is what this regctl builds from the server's flags: the map's route
// table, its HTTP routes, and Close to release the map they come from.
type Live struct {
	Table      routetable.RouteTable
	HTTPRoutes func() (routetable.HTTPRouteTable, error)
	// Describe is how one path is wired (`regctl routes describe`).
	Describe func(path string) (render.Sectioned, error)
	Close    func() error
}

// Open builds the live tables. It is called at most once per command, and
// only once the files, if any, were read and found sound: building the map
// is what costs.
type Open func(ctx context.Context) (*Live, error)

// Selection is what `regctl routes` prints of the live tables.
type Selection struct {
	// Groups keeps only the routes of these API groups.
	Groups []string
	// HTTP prints the HTTP routes the server's installer registers instead
	// of the storage map's paths.
	HTTP bool
	// Resources and Verbs keep only the HTTP routes to these paths of the
	// map and with these installer actions.
	Resources []string
	Verbs     []string
}

// Print writes in format the routes of the live tables that sel keeps.
// A name the tables do not have is refused rather than printed as an empty
// table.
func Print(ctx context.Context, w io.Writer, format render.Format, sel Selection, open Open) error {
	live, err := open(ctx)
	if err != nil {
		return err
	}
	defer live.Close()
	// Groups are the map's: a group served by the CRD handler or the
	// aggregator is known, with no HTTP routes.
	if err := known("API group", "the map", sel.Groups, live.Table.Groups()); err != nil {
		return err
	}
	if !sel.HTTP {
		return render.Print(w, format, live.Table.InGroups(sel.Groups))
	}
	t, err := live.HTTPRoutes()
	if err != nil {
		return err
	}
	if err := known("resource", "the HTTP routes", sel.Resources, t.Resources()); err != nil {
		return err
	}
	if err := known("action", "the HTTP routes", sel.Verbs, t.Actions()); err != nil {
		return err
	}
	return render.Print(w, format, t.Filter(routetable.HTTPFilter{Groups: sel.Groups, Resources: sel.Resources, Actions: sel.Verbs}))
}

// known refuses a name that is not among those of the table: a typo
// would print an empty table.
func known(what, where string, names, valid []string) error {
	for _, n := range names {
		if n != "" && !slices.Contains(valid, n) {
			return fmt.Errorf("no %s %q in %s: it has %s", what, n, where, strings.Join(valid, ", "))
		}
	}
	return nil
}

// DescribeFormats are those `regctl routes describe` prints in.
var DescribeFormats = []render.Format{render.Table, render.YAML, render.JSON}

// Describe writes how each of paths is wired, in the order given: as
// sections of text, or a list in yaml or json.
func Describe(ctx context.Context, w io.Writer, format render.Format, paths []string, open Open) error {
	live, err := open(ctx)
	if err != nil {
		return err
	}
	defer live.Close()
	var out described
	for _, p := range paths {
		d, err := live.Describe(p)
		if err != nil {
			return err
		}
		out = append(out, d)
	}
	if format == render.Table {
		return render.Print(w, format, out)
	}
	return render.Print(w, format, []render.Sectioned(out))
}

// described are several paths' wiring, one after the other.
type described []render.Sectioned

func (d described) Sections(wide bool) []render.Section {
	var out []render.Section
	for _, p := range d {
		out = append(out, p.Sections(wide)...)
	}
	return out
}
