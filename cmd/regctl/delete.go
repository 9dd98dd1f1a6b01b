package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regctl/regctl/internal/stores"
)

type deleteOptions struct {
	writeOptions
	Args          []string
	LabelSelector string
	All           bool
	GracePeriod   int64
}

func newDeleteCmd(g *globalOptions, runF func(context.Context, *deleteOptions) error) *cobra.Command {
	opts := &deleteOptions{writeOptions: writeOptions{globalOptions: g}}
	var output string
	cmd := &cobra.Command{
		Use:   "delete TYPE[/NAME] [NAME...] [-l SELECTOR | --all] [-n NAMESPACE | -A] [--grace-period N]",
		Short: "Delete objects in etcd through kube-apiserver's own stores",
		Long: `Delete objects through the store of their path, with the resource's graceful deletion and
finalizers, as kube-apiserver's DELETE would: a pod bound to a node with a grace period
gets a deletionTimestamp and stays until it is deleted with --grace-period=0; a namespace
goes to Terminating until its finalizers are done; other objects are removed.`,
		Example: `  # Delete one config map
  regctl delete configmaps/old-config -n shop

  # Remove pods at once, without a grace period
  regctl delete pods -l app=batch -n shop --grace-period=0`,
		ValidArgsFunction: completeResourceObjects(g),
		Args:              cobra.MinimumNArgs(1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			opts.namespaceSet = cmd.Flags().Changed("namespace")
			return opts.parseOutput(output)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runDelete(cmd.Context(), opts)
		},
	}
	fs := cmd.Flags()
	addScopeFlags(fs, &opts.scopeOptions)
	fs.StringVarP(&opts.LabelSelector, "selector", "l", "", "Delete the objects with these labels")
	fs.BoolVar(&opts.All, "all", false, "Delete every object of the resource in the namespace")
	fs.Int64Var(&opts.GracePeriod, "grace-period", -1, "Seconds to give the object to terminate; -1 uses the object's own, 0 removes it at once")
	addWriteFlags(fs, &opts.writeOptions, &output)
	_ = cmd.RegisterFlagCompletionFunc("namespace", completeNamespaces(g))
	_ = cmd.RegisterFlagCompletionFunc("output", completeFormats(writeFormats...))
	return cmd
}

func runDelete(ctx context.Context, opts *deleteOptions) error {
	ref, err := parseObjectRef(opts.Args, "", false)
	if err != nil {
		return err
	}
	switch {
	case len(ref.Names) > 0 && (opts.All || opts.LabelSelector != ""):
		return errors.New("name objects or select them with `-l`/`--all`, not both")
	case len(ref.Names) == 0 && !opts.All && opts.LabelSelector == "":
		return fmt.Errorf("name the %s to delete, or pass `-l SELECTOR` or `--all`", ref.Resource)
	}
	w, t, err := opts.openLive(ctx, ref, opts.scopeOptions, "delete")
	if err != nil {
		return err
	}
	defer w.Close()
	ctx, cancel := context.WithTimeout(ctx, opts.RequestTimeout)
	defer cancel()

	type victim struct{ namespace, name string }
	var victims []victim
	for _, n := range ref.Names {
		victims = append(victims, victim{t.Namespace, n})
	}
	if len(ref.Names) == 0 {
		err := stores.List(ctx, w, t, stores.ListOptions{LabelSelector: opts.LabelSelector, ChunkSize: 500}, func(p stores.Page) error {
			for _, item := range p.Items {
				m, err := meta.Accessor(item)
				if err != nil {
					return err
				}
				victims = append(victims, victim{m.GetNamespace(), m.GetName()})
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(victims) == 0 {
			fmt.Fprintln(opts.IO.ErrOut, noResources(t))
			return nil
		}
	}
	var grace *int64
	if opts.GracePeriod >= 0 {
		grace = &opts.GracePeriod
	}
	writeWarning(opts.IO.ErrOut)
	kind := strings.ToLower(t.Resource.Kind)
	suffix := ""
	if opts.DryRun {
		suffix = " (dry run)"
	}
	failed := 0
	printer := newWrittenPrinter(&opts.writeOptions, len(victims))
	for _, v := range victims {
		vt := t
		vt.Namespace = v.namespace
		out, deleted, err := stores.Delete(ctx, w, vt, v.name, grace, stores.WriteOptions{DryRun: opts.DryRun})
		if err != nil {
			failed++
			fmt.Fprintf(opts.IO.ErrOut, "error: %s\n", oneLine(err))
			continue
		}
		what := "deleted"
		if !deleted {
			what = "marked for deletion"
		}
		fmt.Fprintf(opts.IO.ErrOut, "%s/%s %s%s\n", kind, v.name, what, suffix)
		if _, isStatus := out.(*metav1.Status); !isStatus {
			if err := printer.add(out); err != nil {
				return err
			}
		}
	}
	if err := printer.close(); err != nil {
		return err
	}
	if failed > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d of %d objects were not deleted", failed, len(victims))}
	}
	return nil
}
