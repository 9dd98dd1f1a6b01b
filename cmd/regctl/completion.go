package main

import (
	"github.com/spf13/cobra"

	"github.com/regctl/regctl/internal/completion"
	"github.com/regctl/regctl/internal/routetable"
)

// Shell completion is internal/completion's: these hand it the flags typed
// so far, which cobra parses into g before it completes.

func completeResourceObjects(g *globalOptions) cobra.CompletionFunc {
	return completion.ResourceObjects(g.completionFlags)
}

func completeNamespaces(g *globalOptions) cobra.CompletionFunc {
	return completion.Namespaces(g.completionFlags)
}

func completeHTTPRoutes(g *globalOptions, values func(routetable.HTTPRouteTable) []string) cobra.CompletionFunc {
	return completion.HTTPRoutes(g.completionFlags, values)
}

var (
	completeFormats    = completion.Formats
	requireSubcommands = completion.RequireSubcommands
)

func (g *globalOptions) completionFlags() completion.Flags {
	return completion.Flags{Config: g.sessionConfig(), Verbosity: g.Verbosity, EtcdGiven: g.etcdGiven()}
}
