// Package versioncmd is `regctl version`.
package versioncmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/regctl/regctl/internal/buildinfo"
	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/completion"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
)

// Options are the options of `regctl version`.
type Options struct {
	*cli.Globals
	Output render.Format
	output string
}

// versionText is the default output of `regctl version`: aligned
// "key: value" lines.
const versionText render.Format = "text"

var versionFormats = []render.Format{versionText, render.YAML, render.JSON}

// New is the `regctl version` command; runF, when set, runs instead of
// Options.Run (cli.WithOptions).
func New(g *cli.Globals, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Globals: g}
	cmd := &cobra.Command{
		Use:   "version [-o text|yaml|json]",
		Short: "Print the version of regctl and of the Kubernetes and etcd code it runs",
		Long: `Print regctl's version and commit, the Go version it was built with, and the
versions of Kubernetes (whose kube-apiserver storage code regctl runs) and of
etcd (which regctl embeds) it was built against.`,
		Example: `  # Versions, one per line
  regctl version

  # As JSON, e.g. to check the Kubernetes version in a script
  regctl version -o json`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	cmd.Flags().StringVarP(&opts.output, "output", "o", string(versionText), "Output format: text|yaml|json")
	_ = cmd.RegisterFlagCompletionFunc("output", completion.Formats(versionFormats...))
	return cli.WithOptions(cmd, opts, runF)
}

func (o *Options) Complete(*cobra.Command, []string) (err error) {
	o.Output, err = render.ParseFormat(o.output, versionFormats...)
	return err
}

func (o *Options) Validate() error { return nil }

func (o *Options) Run(context.Context) error {
	info := buildinfo.Read(serverflags.KubernetesVersion())
	if o.Output != versionText {
		return render.Print(o.IO.Out, o.Output, info)
	}
	return render.Fields(o.IO.Out, info.Fields())
}
