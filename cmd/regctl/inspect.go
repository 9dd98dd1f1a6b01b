package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/stores"
	"github.com/regctl/regctl/internal/target"
)

type inspectOptions struct {
	*globalOptions
	target.Scope
	Args   []string
	Output render.Format
	// History lists every revision of the object etcd still holds.
	History bool
}

var inspectFormats = []render.Format{render.Table, render.YAML, render.JSON}

func newInspectCmd(g *globalOptions, runF func(context.Context, *inspectOptions) error) *cobra.Command {
	opts := &inspectOptions{globalOptions: g}
	var output string
	cmd := &cobra.Command{
		Use:   "inspect TYPE/NAME [-n NAMESPACE] [--revision N | --history] [-o table|yaml|json]",
		Short: "Show how one object is stored: key, revisions, lease, encoding, storage version, encryption",
		Long: `Show the storage view of one object: its etcd key (from the store's key function), create
and mod revisions, version, lease and the TTL left on it, the value's size, its encoding
(protobuf, JSON, YAML or CBOR), the apiVersion and kind it was stored as (the storage
version), and whether it is encrypted (provider and key name from the value's envelope,
and for KMS v2 the plugin's key ID, read without calling the plugin).
Encrypted values are decoded when --encryption-provider-config holds their key.
With --revision N, the object is shown as etcd held it at revision N.

With --history, every revision of the object etcd still holds (since its last
compaction), oldest first: the revision, whether the object was created, updated or
deleted there (a deletion is a row of its own, with no value; the first value is "oldest
held" when the compaction took its creation), the value's size, and the
fields of the served object that changed from the revision before (metadata.resourceVersion
and managedFields, which every write changes, left aside). Each revision can be read with
` + "`regctl get TYPE/NAME --revision N -o yaml`" + `, and created again from that output.
It is read with a watch of the one key from the oldest revision held, which
writes nothing.`,
		Example: `  # How a pod is stored
  regctl inspect pods/web -n shop

  # The same as data
  regctl inspect secrets/db-password -n shop -o json

  # Every revision of a config map etcd still holds, and what changed in each
  regctl inspect configmaps/app-config -n shop --history`,
		ValidArgsFunction: completeResourceObjects(g),
		Args:              cobra.RangeArgs(1, 2),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			f, err := render.ParseFormat(output, inspectFormats...)
			opts.Output = f
			opts.NamespaceSet = cmd.Flags().Changed("namespace")
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
	addNamespaceFlag(fs, &opts.Scope)
	fs.BoolVar(&opts.History, "history", false, "List every revision of the object etcd still holds, deletions included, and what changed in each")
	_ = cmd.RegisterFlagCompletionFunc("namespace", completeNamespaces(g))
	_ = cmd.RegisterFlagCompletionFunc("output", completeFormats(inspectFormats...))
	return cmd
}

func runInspect(ctx context.Context, opts *inspectOptions) error {
	ref, err := target.ParseRef(opts.Args, "", false)
	if err != nil {
		return err
	}
	if len(ref.Names) != 1 || ref.Subresource != "" {
		return fmt.Errorf("name exactly one object, e.g. `pods/web`")
	}
	if opts.History && opts.Revision != 0 {
		return errors.New("`--history` lists every revision held: drop `--revision`")
	}
	w, t, err := opts.openLive(ctx, ref, opts.Scope, "")
	if err != nil {
		return err
	}
	defer w.Close()
	if opts.History {
		return inspectHistory(ctx, t, ref.Names[0], opts)
	}
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

// inspectHistory lists the revisions of one object. An object that etcd
// holds no revision of, not even its deletion, is NotFound.
func inspectHistory(ctx context.Context, t stores.Target, name string, opts *inspectOptions) error {
	h, err := stores.ObjectHistory(ctx, t, name)
	if err != nil {
		return err
	}
	if len(h.Revisions) == 0 {
		nf := apierrors.NewNotFound(schema.GroupResource{Resource: t.Path}, name)
		return fmt.Errorf("%s (etcd holds no revision of key %s since its last compaction)", nf.Error(), h.Key)
	}
	if opts.Output == render.Table {
		return render.Print(opts.IO.Out, opts.Output, historyTable(h.Revisions))
	}
	return render.Print(opts.IO.Out, opts.Output, h)
}

// historyTable shows an object's revisions, one row each.
type historyTable []stores.HistoryEntry

func (historyTable) Header(bool) []string {
	return []string{"ORDER", "REVISION", "EVENT", "VALUE SIZE", "CHANGED"}
}

func (t historyTable) Rows(bool) [][]string {
	rows := make([][]string, 0, len(t))
	for _, e := range t {
		changed := strings.Join(e.Changed, ", ")
		switch {
		case e.Problem != "":
			changed = "<unreadable: " + e.Problem + ">"
		case e.Event == stores.EventUpdated && changed == "":
			changed = "<only metadata.resourceVersion or managedFields>"
		case changed == "":
			changed = "<none>"
		}
		rows = append(rows, []string{strconv.Itoa(e.Order), strconv.FormatInt(e.Revision, 10), e.Event, strconv.Itoa(e.ValueSize), changed})
	}
	return rows
}
