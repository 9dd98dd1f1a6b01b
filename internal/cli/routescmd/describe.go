package routescmd

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/completion"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/routes"
)

// DescribeOptions are the options of `regctl routes describe`.
type DescribeOptions struct {
	*cli.Globals
	Paths  []string
	Output render.Format
	output string
}

// NewDescribe is the `regctl routes describe` command; runF, when set,
// runs instead of DescribeOptions.Run.
func NewDescribe(g *cli.Globals, runF func(context.Context, *DescribeOptions) error) *cobra.Command {
	opts := &DescribeOptions{Globals: g}
	cmd := &cobra.Command{
		Use:   "describe PATH... [-o yaml|json]",
		Short: "Show how the server wires a path of the storage map, and where the code is",
		Long: `Show every decision kube-apiserver makes for a path of the storage map, in
the order it makes them, each with its value and, for code, its Go name and
file:line in the Kubernetes source this regctl was built from:

  storage provider     the group's RESTStorageProvider (or the apiextensions
                       server, the CRD handler, the aggregator)
  REST storage         its Go type, and the constructor that made the store
  genericregistry.Store
                       NewFunc, KeyRootFunc and KeyFunc with the keys they
                       give, PredicateFunc with the fields a selector can
                       use, TTLFunc, hooks, TableConvertor, StorageVersioner
  strategy             the create, update, delete and reset-fields
                       strategies, and where each method is
  CompleteWithOptions and RESTOptionsGetter
                       the getter CompleteWithOptions asks, and what it
                       gave: prefixes, codec, media type, storage version,
                       transformer, garbage collection, workers
  decorator            the watch cache or none and why, triggers, indexers
  etcd3 store          the functions that make it, and the key pattern
  subresources, HTTP routes

Functions are read off the running code (reflection over the store and the
binary's line table), never from a table. A custom resource is described as
the CRD handler builds its storage.`,
		Example: `  # How pods are stored, step by step
  regctl routes describe pods

  # A subresource, and events with their TTL and no watch cache
  regctl routes describe deployments.apps/scale events

  # For a program
  regctl routes describe events -o yaml`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completion.Routes(g.CompletionFlags),
	}
	cmd.Flags().StringVarP(&opts.output, "output", "o", string(render.Table), "Output format: table|yaml|json")
	_ = cmd.RegisterFlagCompletionFunc("output", completion.Formats(routes.DescribeFormats...))
	return cli.WithOptions(cmd, opts, runF)
}

func (o *DescribeOptions) Complete(_ *cobra.Command, args []string) (err error) {
	o.Paths = args
	o.Output, err = render.ParseFormat(o.output, routes.DescribeFormats...)
	return err
}

func (o *DescribeOptions) Validate() error {
	if o.RevisionGiven() {
		return errors.New("`--revision` is for get, keys, inspect, scan and why: routes describe shows the map the server builds now")
	}
	return nil
}

func (o *DescribeOptions) Run(ctx context.Context) error {
	return routes.Describe(ctx, o.IO.Out, o.Output, o.Paths, openRoutes(o.Globals))
}
