// Package getcmd is `regctl get`: objects read through their stores, printed
// as kubectl get prints them (get.Run).
package getcmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/completion"
	"github.com/regctl/regctl/internal/get"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/target"
)

// Options are the options of `regctl get`.
type Options struct {
	*cli.Globals
	target.Scope
	Get         get.Options
	Subresource string
	output      string
	refs        []target.Ref
}

var formats = []render.Format{render.Table, render.Wide, render.YAML, render.JSON, render.Name}

// New is the `regctl get` command; runF, when set, runs instead of
// Options.Run (cli.WithOptions).
func New(g *cli.Globals, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Globals: g, Get: get.Options{Print: render.NewGetPrintFlags()}}
	cmd := &cobra.Command{
		Use:   "get TYPE[,TYPE...] [NAME...] | TYPE/NAME... [-n NAMESPACE | -A] [-o table|wide|yaml|json|name|jsonpath=...|custom-columns=...|go-template=...]",
		Short: "Read objects from etcd through kube-apiserver's own stores",
		Long: `Read objects from etcd through the store of their path: the server's Get and List,
codecs, key functions, selectors (predicates) and table printers. Nothing is written.

Names are resolved as kubectl resolves them, with kubectl's RESTMapper on the server's
discovery: plural, singular, kind or short name (po, svc, cm, ...), resource.version.group
(pods.v1.). Several types are read at once as kubectl reads them: pods,services, the
category all, or objects named TYPE/NAME (pods/web services/web); tables print one per type,
names prefixed with their kind. With
--ignore-not-found, named objects that do not exist are passed over.
Objects print as the apiserver serves them (external version, apiVersion and kind set);
managedFields are hidden unless --show-managed-fields. Objects whose stored value cannot be
read are reported on stderr with their etcd key and the reason, the rest are printed, and
the exit code is 1.

Tables are the store's table printer's, printed by kubectl's own table printer as kubectl
get prints the apiserver's, with kubectl's --no-headers, --show-labels, -L/--label-columns,
--show-kind and --sort-by. -o jsonpath=, custom-columns=, go-template= (their -file forms,
and --template) are printed by kubectl's printers too. With --sort-by or a template, a list
is printed once all of it has been read; otherwise yaml, json and names stream page by page.

With -w (--watch), the objects are printed and then every change to them, until Ctrl-C,
as kubectl get -w prints them: a table's header once, then a row per change; yaml
documents separated by ---; json objects one after another. Changes come from the
store's own Watch on etcd (no watch cache, so no apiserver is needed), from the revision
the list was read at: none is missed or shown twice. One object is watched by name
(metadata.name), and must exist. --watch-only prints the changes alone.
--output-watch-events shows each as an event: an EVENT column (ADDED, MODIFIED,
DELETED), or one {"type":...,"object":...} line per event in json. With --watch-only,
--resource-version RV starts after etcd revision RV, as long as etcd has not compacted
the changes since. A watch writes nothing to etcd.

  regctl get pods -n shop -w
  regctl get pods/web -n shop --watch-only --output-watch-events -o json

With --revision N, objects are read as they were at etcd revision N, with the store's List
at exactly that resourceVersion (the apiserver's resourceVersionMatch=Exact; one object is a
list of its name), as long as etcd has not compacted it. A time (RFC 3339, or an age: 90m
ago) is the last revision written at or before it by the clocks of the Leases that
kube-apiserver and the controllers renew every few seconds; stderr names that revision and
the clocks around it. With -w, the objects at N are printed, then every change after N, as a
kubectl watch from resourceVersion N replays them; with --watch-only, the changes after N
alone. ` + "`regctl inspect TYPE/NAME --history`" + ` lists the revisions of an object, with
their times.`,
		Example: `  # One pod, as the apiserver's GET returns it
  regctl get pods/web -n shop -o yaml

  # Every pod on one node, across namespaces
  regctl get pods -A --field-selector spec.nodeName=node-1

  # Pods and services of a namespace, a table for each
  regctl get pods,services -n shop

  # The status subresource of a pod
  regctl get pods/status web -n shop -o json

  # Names of the pods on one node, with kubectl's JSONPath
  regctl get pods -A --field-selector spec.nodeName=node-1 -o jsonpath='{.items[*].metadata.name}'

  # A config map as it was at 14:00 UTC on 28 November (the last revision written by then),
  # or 90 minutes ago
  regctl get configmaps/app-config -n shop --revision 2026-11-28T14:00:00Z -o yaml
  regctl get configmaps/app-config -n shop --revision 90m -o yaml

  # A config map as it was at etcd revision 12
  regctl get configmaps/app-config -n shop --revision 12 -o yaml

  # Every pod and its node, oldest first
  regctl get pods -A -o custom-columns=NAME:.metadata.name,NODE:.spec.nodeName --sort-by=.metadata.creationTimestamp`,
		ValidArgsFunction: completion.ResourceObjects(g.CompletionFlags),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return nil
			}
			// kubectl get's own words, with regctl's list of resources.
			fmt.Fprintf(g.IO.ErrOut, "You must specify the type of resource to get. Use \"%s routes\" for a complete list of supported resources.\n\n", cmd.Root().Name())
			return cmdutil.UsageErrorf(cmd, "Required resource not specified.")
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&opts.output, "output", "o", string(render.Table),
		"Output format: table|wide|yaml|json|name, or kubectl's jsonpath=, jsonpath-file=, custom-columns=, custom-columns-file=, go-template=, go-template-file=")
	opts.Get.Print.AddFlags(cmd)
	cli.AddScopeFlags(fs, &opts.Scope)
	fs.StringVar(&opts.Subresource, "subresource", "", "Read this subresource of the object (e.g. status)")
	fs.StringVarP(&opts.Get.LabelSelector, "selector", "l", "", "Label selector, e.g. app=web,tier!=db")
	fs.StringVar(&opts.Get.FieldSelector, "field-selector", "", "Field selector, e.g. spec.nodeName=node-1,status.phase=Running")
	fs.Int64Var(&opts.Get.ChunkSize, "chunk-size", 500, "Objects per page; 0 reads all at once. A page is one etcd range request, or, without selectors, one per core, read side by side")
	fs.BoolVar(&opts.Get.IgnoreNotFound, "ignore-not-found", false, "Pass over named objects that do not exist, and say nothing when a list finds none")
	fs.BoolVar(&opts.Get.ShowManagedFields, "show-managed-fields", false, "Keep metadata.managedFields in yaml and json output")
	fs.BoolVarP(&opts.Get.Watch, "watch", "w", false, "After listing or getting the objects, watch for changes (until Ctrl-C)")
	fs.BoolVar(&opts.Get.WatchOnly, "watch-only", false, "Watch for changes without listing or getting first")
	fs.BoolVar(&opts.Get.OutputWatchEvents, "output-watch-events", false, "Print watch events (ADDED, MODIFIED, DELETED) with --watch or --watch-only; objects listed first are ADDED events")
	fs.StringVar(&opts.Get.ResourceVersion, "resource-version", "", "With --watch-only, print the changes made after this resourceVersion (an etcd revision) rather than from now")
	cli.CompleteNamespaces(cmd, g)
	_ = cmd.RegisterFlagCompletionFunc("output", completion.Formats(append(formats, opts.Get.Print.KubectlFormats()...)...))
	return cli.WithOptions(cli.ReadsAtRevision(cmd), opts, runF)
}

// Complete takes what the flags leave to the command: its arguments, the
// output format, the streams and the global flags get reads by.
func (o *Options) Complete(cmd *cobra.Command, args []string) error {
	f, err := o.Get.Print.Format(o.output, cmd.Flags().Changed("output"), formats...)
	if err != nil {
		return err
	}
	o.NamespaceSet = cmd.Flags().Changed("namespace")
	o.Get.Args, o.Get.Output = args, f
	o.Get.Out, o.Get.ErrOut = o.IO.Out, o.IO.ErrOut
	o.Get.Revision, o.Get.AllNamespaces = o.Revision, o.AllNamespaces
	o.refs, err = target.ParseRefs(args, o.Subresource, true)
	return err
}

func (o *Options) Validate() error { return o.Get.Validate(o.Snapshot) }

func (o *Options) Run(ctx context.Context) error {
	ctx = render.WithWarnings(ctx, o.IO.ErrOut)
	cfg := o.SessionConfig()
	// The objects of a CRD that is gone are read through one made up
	// from them, which says so.
	cfg.Leftovers = true
	session, named, err := cli.OpenTargets(ctx, storagemap.OpenData, cfg, o.refs, o.Scope, "get", target.Types)
	if err != nil {
		return err
	}
	defer session.Close()
	err = get.Run(ctx, named, o.Get)
	if errors.Is(err, get.ErrReported) {
		// Each failure has its line on stderr already.
		return &cli.ExitError{Code: 1}
	}
	return err
}
