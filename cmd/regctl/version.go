package main

import (
	"github.com/spf13/cobra"

	"github.com/regctl/regctl/internal/buildinfo"
	"github.com/regctl/regctl/internal/completion"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
)

type versionOptions struct {
	*globalOptions
	Output render.Format
}

// versionText is the default output of `regctl version`: aligned
// "key: value" lines.
const versionText render.Format = "text"

var versionFormats = []render.Format{versionText, render.YAML, render.JSON}

func newVersionCmd(g *globalOptions) *cobra.Command {
	opts := &versionOptions{globalOptions: g}
	var output string
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
		PreRunE: func(cmd *cobra.Command, args []string) error {
			f, err := render.ParseFormat(output, versionFormats...)
			opts.Output = f
			return err
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVersion(opts)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", string(versionText), "Output format: text|yaml|json")
	_ = cmd.RegisterFlagCompletionFunc("output", completion.Formats(versionFormats...))
	return cmd
}

func runVersion(opts *versionOptions) error {
	info := buildinfo.Read(serverflags.KubernetesVersion())
	if opts.Output != versionText {
		return render.Print(opts.IO.Out, opts.Output, info)
	}
	return render.Fields(opts.IO.Out, info.Fields())
}
