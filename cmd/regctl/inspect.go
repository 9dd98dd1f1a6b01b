package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/render"
)

type inspectOptions struct {
	*globalOptions
	scopeOptions
	Args   []string
	Output render.Format
}

var inspectFormats = []render.Format{render.Table, render.YAML, render.JSON}

func newInspectCmd(g *globalOptions, runF func(context.Context, *inspectOptions) error) *cobra.Command {
	opts := &inspectOptions{globalOptions: g}
	var output string
	cmd := &cobra.Command{
		Use:   "inspect TYPE/NAME [-n NAMESPACE] [-o table|yaml|json]",
		Short: "Show how one object is stored: key, revisions, lease, encoding, storage version, encryption",
		Long: `Show the storage view of one object: its etcd key (from the store's key function), create
and mod revisions, version, lease and the TTL left on it, the value's size, its encoding
(protobuf, JSON, YAML or CBOR), the apiVersion and kind it was stored as (the storage
version), and whether it is encrypted (provider and key name from the value's envelope,
and for KMS v2 the plugin's key ID, read without calling the plugin).
Encrypted values are decoded when --encryption-provider-config holds their key.
With --revision N, the object is shown as etcd held it at revision N.`,
		Example: `  # How a pod is stored
  regctl inspect pods/web -n shop

  # The same as data
  regctl inspect secrets/db-password -n shop -o json`,
		ValidArgsFunction: completeResourceObjects(g),
		Args:              cobra.RangeArgs(1, 2),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			f, err := render.ParseFormat(output, inspectFormats...)
			opts.Output = f
			opts.namespaceSet = cmd.Flags().Changed("namespace")
			return err
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runInspect(cmd.Context(), opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&output, "output", "o", string(render.Table), "Output format: table|yaml|json")
	addNamespaceFlag(fs, &opts.scopeOptions)
	_ = cmd.RegisterFlagCompletionFunc("namespace", completeNamespaces(g))
	_ = cmd.RegisterFlagCompletionFunc("output", completeFormats(inspectFormats...))
	return cmd
}

func runInspect(ctx context.Context, opts *inspectOptions) error {
	ref, err := parseObjectRef(opts.Args, "", false)
	if err != nil {
		return err
	}
	if len(ref.Names) != 1 || ref.Subresource != "" {
		return fmt.Errorf("name exactly one object, e.g. `pods/web`")
	}
	w, t, err := opts.openLive(ctx, ref, opts.scopeOptions, "")
	if err != nil {
		return err
	}
	defer w.Close()
	if err := opts.checkRevision(ctx, t); err != nil {
		return err
	}
	key, info, err := etcdview.InspectObject(ctx, t.Handle, t.Namespace, ref.Names[0], opts.Revision)
	if err != nil {
		return err
	}
	if info == nil {
		nf := apierrors.NewNotFound(schema.GroupResource{Resource: t.Path}, ref.Names[0])
		return fmt.Errorf("%s (no key %s)", nf.Error(), key)
	}
	return render.Print(opts.IO.Out, opts.Output, info)
}
