// Package routescmd is `regctl routes` and `regctl routes diff`: the map's
// route tables printed, checked and compared (routes.Print, Check, Diff).
package routescmd

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/completion"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/routes"
	"github.com/regctl/regctl/internal/routetable"
)

// Options are the options of `regctl routes`.
type Options struct {
	*cli.Globals
	routes.Selection
	Output render.Format
	// Check is a committed route table to compare the live one with.
	Check  string
	output string
}

// New is the `regctl routes` command; runF, when set, runs instead of
// Options.Run (cli.WithOptions).
func New(g *cli.Globals, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Globals: g}
	cmd := &cobra.Command{
		Use:   "routes [--http [--resource RESOURCE,...] [--verb ACTION,...]] [-o table|wide|yaml|json]",
		Short: "Print every path of the storage map and how it is stored, or its HTTP routes",
		Long: `Print every path kube-apiserver serves, in every API group and version, with
its scope, etcd key prefix, storage decorator (watch cache or not), API
version, kind, verbs and storage version.

Paths are named as kubectl names resources: "pods", "deployments.apps" for a
group's preferred version, "horizontalpodautoscalers.v1.autoscaling" for the
others, a subresource after its resource ("deployments.apps/scale").

The map is built by the server's own code from the given kube-apiserver flags.
Groups come in the order the server installs them, versions by priority,
paths sorted within a version: the output is deterministic, so it can be
committed and diffed.

With --http, print instead every HTTP route kube-apiserver's installer
registers for the map, as the server serves them: method, path template,
the installer's action (get, list, watch, watchlist, post, put, patch, delete,
deletecollection, connect, as it records it on the route), the path of the
map it reaches and, with -o wide, API version, kind, scope and the storage's
Go type. Path parameters are named in braces as the server's OpenAPI names
them. Custom resources are served by the CRD handler and aggregated APIs by
the aggregator, not by the installer: they have no routes here. Routes come
by group and version as above, then by path and method. --resource keeps
the routes to some paths of the map (a resource names its subresources too),
--verb those of some actions.`,
		Example: `  # The default kube-apiserver's storage map
  regctl routes

  # The apps and core groups only
  regctl routes --api-group apps,core

  # With kind, verbs, storage version and Go type
  regctl routes -o wide

  # As a server with watch caching off for secrets would store things
  regctl routes --watch-cache-sizes=secrets#0 -o yaml

  # In CI: exit 1 with the diff when the committed table is out of date
  regctl routes -o yaml > routes.yaml
  regctl routes --check routes.yaml

  # Every HTTP route to pods and their subresources
  regctl routes --http --resource pods

  # The watch routes of the apps group, with kind and storage type
  regctl routes --http --api-group apps --verb watch,watchlist -o wide

  # The HTTP routes, committed and checked in CI as the map is
  regctl routes --http -o yaml > http-routes.yaml
  regctl routes --check http-routes.yaml`,
		Args: cobra.NoArgs,
	}
	cmd.Flags().StringVarP(&opts.output, "output", "o", string(render.Table), "Output format: table|wide|yaml|json")
	cmd.Flags().StringVar(&opts.Check, "check", "", "Compare the live table with this committed one: exit 1 with the diff when they differ, 2 on error")
	addGroupFlag(cmd.Flags(), &opts.Groups)
	cmd.Flags().BoolVar(&opts.HTTP, "http", false, "Print the HTTP routes the server's installer registers for the map")
	cmd.Flags().StringSliceVar(&opts.Resources, "resource", nil, "With --http, only the routes to these paths of the map, a resource's subresources included (comma-separated)")
	cmd.Flags().StringSliceVar(&opts.Verbs, "verb", nil, "With --http, only the routes of these installer actions (comma-separated)")
	cmd.AddCommand(NewDiff(g, nil), NewDescribe(g, nil))
	_ = cmd.RegisterFlagCompletionFunc("output", completion.Formats(routes.Formats...))
	_ = cmd.RegisterFlagCompletionFunc("resource", completion.HTTPRoutes(g.CompletionFlags, routetable.HTTPRouteTable.Resources))
	_ = cmd.RegisterFlagCompletionFunc("verb", completion.HTTPRoutes(g.CompletionFlags, routetable.HTTPRouteTable.Actions))
	return cli.WithOptions(cmd, opts, runF)
}

func (o *Options) Complete(*cobra.Command, []string) (err error) {
	o.Output, err = render.ParseFormat(o.output, routes.Formats...)
	return err
}

// Validate refuses flags that do not go together before the map is built.
// --check's refusals exit 2, as its other troubles do.
func (o *Options) Validate() error {
	if o.RevisionGiven() {
		return errors.New("`--revision` is for get, keys, inspect, scan and why: routes shows the map the server builds now")
	}
	if !o.HTTP && (len(o.Resources) > 0 || len(o.Verbs) > 0) {
		return errors.New("`--resource` and `--verb` filter HTTP routes: add `--http`")
	}
	if o.Check == "" {
		return nil
	}
	if o.Output != render.Table {
		return cli.Trouble(errors.New("`--check` prints a diff and takes no `-o`: for data, use `regctl routes diff FILE live -o json`"))
	}
	if len(o.Resources) > 0 || len(o.Verbs) > 0 {
		return cli.Trouble(errors.New("`--check` compares whole tables, or groups of them: `--resource` and `--verb` are for printing"))
	}
	return nil
}

func (o *Options) Run(ctx context.Context) error {
	if o.Check == "" {
		return routes.Print(ctx, o.IO.Out, o.Output, o.Selection, openRoutes(o.Globals))
	}
	return cli.DiffStatus(routes.Check(ctx, o.IO, routes.CheckOptions{File: o.Check, Groups: o.Groups, HTTP: o.HTTP}, openRoutes(o.Globals)))
}
