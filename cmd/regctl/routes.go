package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/wiring"
)

type routesOptions struct {
	*globalOptions
	Output render.Format
	// Check is a committed route table to compare the live one with.
	Check string
	// Groups keeps only the routes of these API groups.
	Groups []string
}

var routesFormats = []render.Format{render.Table, render.Wide, render.YAML, render.JSON}

func newRoutesCmd(g *globalOptions, runF func(context.Context, *routesOptions) error) *cobra.Command {
	opts := &routesOptions{globalOptions: g}
	var output string
	cmd := &cobra.Command{
		Use:   "routes [-o table|wide|yaml|json]",
		Short: "Print every path of the storage map and how it is stored",
		Long: `Print every path kube-apiserver serves, in every API group and version, with
its scope, etcd key prefix, storage decorator (watch cache or not), API
version, kind, verbs and storage version.

Paths are named as kubectl names resources: "pods", "deployments.apps" for a
group's preferred version, "horizontalpodautoscalers.v1.autoscaling" for the
others, a subresource after its resource ("deployments.apps/scale").

The map is built by the server's own code from the given kube-apiserver flags.
Groups come in the order the server installs them, versions by priority,
paths sorted within a version: the output is deterministic, so it can be
committed and diffed.`,
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
  regctl routes --check routes.yaml`,
		Args: cobra.NoArgs,
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if g.Revision != 0 {
				return errors.New("`--revision` is for get, keys and inspect: routes shows the map the server builds now")
			}
			f, err := render.ParseFormat(output, routesFormats...)
			opts.Output = f
			return err
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runRoutes(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", string(render.Table), "Output format: table|wide|yaml|json")
	cmd.Flags().StringVar(&opts.Check, "check", "", "Compare the live table with this committed one: exit 1 with the diff when they differ, 2 on error")
	addGroupFlag(cmd.Flags(), &opts.Groups)
	cmd.AddCommand(newRoutesDiffCmd(g, nil))
	_ = cmd.RegisterFlagCompletionFunc("output", completeFormats(routesFormats...))
	return cmd
}

func runRoutes(ctx context.Context, opts *routesOptions) error {
	if opts.Check != "" {
		return checkRoutes(ctx, opts)
	}
	w, err := wiring.Build(ctx, opts.wiringConfig())
	if err != nil {
		return err
	}
	defer w.Close()
	for _, g := range opts.Groups {
		if known := w.Table.Groups(); g != "" && !slices.Contains(known, g) {
			return fmt.Errorf("no API group %q in the map: it has %s", g, strings.Join(known, ", "))
		}
	}
	return render.Print(opts.IO.Out, opts.Output, w.Table.InGroups(opts.Groups))
}
