package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/stores"
	"github.com/regctl/regctl/internal/target"
)

type keysOptions struct {
	*globalOptions
	target.Scope
	Args      []string
	Output    render.Format
	Check     bool
	ChunkSize int64
}

var keysFormats = []render.Format{render.Table, render.YAML, render.JSON}

func newKeysCmd(g *globalOptions, runF func(context.Context, *keysOptions) error) *cobra.Command {
	opts := &keysOptions{globalOptions: g}
	var output string
	cmd := &cobra.Command{
		Use:   "keys [TYPE[/NAME] [NAME...]] [-n NAMESPACE | -A] [--check]",
		Short: "Show etcd keys: usage per resource, a resource's keys, or one object's key",
		Long: `With no argument, show each path that has a store with its key prefix, number of keys and
total value size, plus the keys under the etcd prefix that no core path claims (other API
groups, allocator ranges), grouped by their next path segment.

With a resource, stream its keys (paged, keys only). With an object, print the exact key its
store uses (the store's own key function); this needs no etcd, unless --check asks whether
the key exists, with its revisions, version, lease and value size.

With --revision N, a resource's keys, or --check's answer, are as they were at etcd
revision N, as long as etcd has not compacted it.`,
		Example: `  # Keys and bytes per resource
  regctl keys

  # Every pod key in one namespace
  regctl keys pods -n kube-system

  # The key of one object, and whether it exists
  regctl keys pods/web -n shop --check`,
		ValidArgsFunction: completeResourceObjects(g),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			f, err := render.ParseFormat(output, keysFormats...)
			opts.Output = f
			opts.NamespaceSet = cmd.Flags().Changed("namespace")
			if err != nil {
				return err
			}
			return checkChunkSize(opts.ChunkSize)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runKeys(cmd.Context(), opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&output, "output", "o", string(render.Table), "Output format: table|yaml|json")
	addScopeFlags(fs, &opts.Scope)
	fs.BoolVar(&opts.Check, "check", false, "With an object: read the key from etcd and show whether it exists")
	fs.Int64Var(&opts.ChunkSize, "chunk-size", 10000, "Keys per etcd range request (keys only: etcd sends no values)")
	_ = cmd.RegisterFlagCompletionFunc("namespace", completeNamespaces(g))
	_ = cmd.RegisterFlagCompletionFunc("output", completeFormats(keysFormats...))
	return cmd
}

func runKeys(ctx context.Context, opts *keysOptions) error {
	if err := opts.Scope.Check(); err != nil {
		return err
	}
	if len(opts.Args) == 0 && opts.Revision != 0 {
		return errors.New("`--revision` lists a resource's keys or checks an object's as they were: name a resource, e.g. `keys pods --revision N`")
	}
	if len(opts.Args) == 0 {
		return keysUsage(ctx, opts)
	}
	ref, err := target.ParseRef(opts.Args, "", false)
	if err != nil {
		return err
	}
	if ref.Subresource != "" {
		return fmt.Errorf("keys belong to resources, not subresources: use %q", ref.Resource)
	}
	w, t, err := openKeysTarget(ctx, opts, ref)
	if err != nil {
		return err
	}
	defer w.Close()
	if len(ref.Names) == 0 || opts.Check {
		if err := opts.checkRevision(ctx, t); err != nil {
			return err
		}
	}
	if len(ref.Names) > 0 {
		return objectKeys(ctx, t, ref.Names, opts)
	}
	return streamKeys(ctx, t, opts)
}

// openKeysTarget builds the map for ref's resource and resolves it. The
// key of an object is the store's key function: it needs the map but no
// etcd, unless --check reads it.
func openKeysTarget(ctx context.Context, opts *keysOptions, ref target.Ref) (*storagemap.Session, stores.Target, error) {
	var w *storagemap.Session
	var err error
	if len(ref.Names) > 0 && !opts.Check {
		cfg := opts.sessionConfig()
		cfg.Only = ref.Resource
		w, err = storagemap.Open(ctx, cfg)
	} else {
		w, err = opts.buildLiveFor(ctx, ref.Resource)
	}
	if err != nil {
		return nil, stores.Target{}, err
	}
	t, err := target.One(w.Map, ref, opts.Scope)
	if err == nil && !t.Stored() {
		err = fmt.Errorf("%s is not stored in etcd", t.Path)
	}
	if err != nil {
		w.Close()
		return nil, stores.Target{}, err
	}
	return w, t, nil
}

func keysUsage(ctx context.Context, opts *keysOptions) error {
	w, err := opts.buildLive(ctx)
	if err != nil {
		return err
	}
	defer w.Close()
	main, err := w.Client(ctx)
	if err != nil {
		return err
	}
	usage, err := stores.Usage(ctx, main, w.Map.Table.EtcdPrefix, w.Map.Ordered(), opts.ChunkSize)
	if err != nil {
		return err
	}
	if opts.Output == render.Table {
		return render.Print(opts.IO.Out, opts.Output, etcdview.UsageTable(usage))
	}
	return render.Print(opts.IO.Out, opts.Output, usage)
}

// streamKeys prints a resource's keys page by page.
func streamKeys(ctx context.Context, t stores.Target, opts *keysOptions) error {
	out := bufio.NewWriter(opts.IO.Out)
	list := render.NewStringList(out, opts.Output)
	err := etcdview.Keys(ctx, t.Handle, t.Namespace, opts.Revision, opts.ChunkSize, func(keys []string) error {
		for _, key := range keys {
			if err := list.Add(key); err != nil {
				return err
			}
		}
		// A page at a time, so a pipe sees keys as they come.
		return out.Flush()
	})
	if err != nil {
		// Keys that stopped coming must not pass for all of them.
		list.Cut()
		out.Flush()
		return err
	}
	if err := list.Close(); err != nil {
		return err
	}
	return out.Flush()
}

// objectKeys prints the key of each named object, or with --check what etcd
// holds there; a missing key makes the exit code 1.
func objectKeys(ctx context.Context, t stores.Target, names []string, opts *keysOptions) error {
	infos, err := etcdview.ObjectKeys(ctx, t.Handle, t.Namespace, names, opts.Check, opts.Revision)
	if err != nil {
		return err
	}
	if !opts.Check {
		list := render.NewStringList(opts.IO.Out, opts.Output)
		for _, info := range infos {
			if err := list.Add(info.Key); err != nil {
				return err
			}
		}
		return list.Close()
	}
	var missing []string
	for _, info := range infos {
		if !info.Exists {
			missing = append(missing, info.Key)
		}
	}
	if opts.Output == render.Table {
		err = render.Print(opts.IO.Out, opts.Output, keyInfoTable(infos))
	} else if len(infos) == 1 {
		err = render.Print(opts.IO.Out, opts.Output, infos[0])
	} else {
		err = render.Print(opts.IO.Out, opts.Output, infos)
	}
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return errors.New("no such key: " + strings.Join(missing, ", "))
	}
	return nil
}

// keyInfoTable shows several key checks under one header.
type keyInfoTable []etcdview.KeyInfo

func (t keyInfoTable) Header(wide bool) []string { return etcdview.KeyInfo{}.Header(wide) }

func (t keyInfoTable) Rows(wide bool) [][]string {
	var rows [][]string
	for _, k := range t {
		rows = append(rows, k.Rows(wide)...)
	}
	return rows
}
