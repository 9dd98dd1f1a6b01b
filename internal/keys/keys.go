// Package keys is `regctl keys`: how many keys and bytes each stored
// resource has in etcd, a resource's keys, or the key of one object (the
// store's own key function) and what etcd holds there. It reads etcd
// through etcdview and prints with render; the command hands it the
// handles or the resolved target.
package keys

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/gctune"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/stores"
	"github.com/regctl/regctl/internal/stores/usage"
	"github.com/regctl/regctl/internal/target"
)

// Formats are the output formats keys prints.
var Formats = []render.Format{render.Table, render.YAML, render.JSON}

// Options are what keys shows, and how.
type Options struct {
	Output render.Format
	// Check reads each named object's key from etcd: whether it exists,
	// with its revisions, version, lease and value size.
	Check bool
	// ChunkSize is how many keys one etcd range request reads.
	ChunkSize int64
	// Revision is the etcd revision to read at; 0 is now.
	Revision int64
	// Namespace, with no resource named, counts the namespaced resources'
	// keys in that namespace alone (an explicit -n).
	Namespace string
	// ShowEmpty lists, in a table of usage per resource, the resources
	// that hold no keys too; yaml and json always list them.
	ShowEmpty bool
}

// Validate checks the flags; it needs no etcd.
func (o Options) Validate() error {
	return stores.CheckChunkSize(o.ChunkSize)
}

// Parse reads keys' arguments: none is the usage of every resource (a nil
// Ref), otherwise one resource and maybe names of its objects. It needs no
// etcd.
func Parse(args []string, scope target.Scope, o Options) (*target.Ref, error) {
	if err := scope.Check(); err != nil {
		return nil, err
	}
	if len(args) == 0 && o.Revision != 0 {
		return nil, errors.New("`--revision` lists a resource's keys or checks an object's as they were: name a resource, e.g. `keys pods --revision N`")
	}
	if len(args) == 0 {
		return nil, nil
	}
	ref, err := target.ParseRef(args, "", false)
	if err != nil {
		return nil, err
	}
	if ref.Subresource != "" {
		return nil, fmt.Errorf("keys belong to resources, not subresources: use %q", ref.Resource)
	}
	return &ref, nil
}

// NeedsEtcd tells whether showing the keys of the objects names (all of
// them when none) reads etcd: an object's key is the store's key function,
// which needs the map but no etcd, unless Check reads it.
func (o Options) NeedsEtcd(names []string) bool {
	return len(names) == 0 || o.Check
}

// Usage prints each path that has a store with its key prefix, number of
// keys and total value size, and the keys under the etcd prefix of ks
// that no path claims, grouped by their next path segment; with
// o.Namespace, each namespaced resource's in that namespace.
func Usage(ctx context.Context, ks handle.Keyspace, o Options, out io.Writer) error {
	main, etcdPrefix, handles := ks.Client, ks.EtcdPrefix, ks.Handles
	// Each page of values is garbage once counted: the start-up pacing
	// would let several of them pile up.
	gctune.BoundHeap()
	counted, err := usage.Of(ctx, main, etcdPrefix, handles, o.ChunkSize)
	if o.Namespace != "" {
		counted, err = usage.In(ctx, o.Namespace, handles, o.ChunkSize)
	}
	if err != nil {
		return err
	}
	if o.Output == render.Table {
		if !o.ShowEmpty {
			// A small cluster holds keys of a few resources of the
			// map's hundred and more.
			counted = slices.DeleteFunc(counted, func(u etcdview.Usage) bool { return u.Keys == 0 })
		}
		return render.Print(out, o.Output, etcdview.UsageTable(counted))
	}
	return render.Print(out, o.Output, counted)
}

// Of prints the keys of t: each named object's (with Check, what etcd
// holds there), or with no names every key of the resource, page by page.
// A missing key, with Check, is an error once every key is printed.
func Of(ctx context.Context, out io.Writer, t handle.Target, names []string, o Options) error {
	if !t.Stored() {
		return fmt.Errorf("%s is not stored in etcd", t.Path)
	}
	if o.NeedsEtcd(names) {
		if err := stores.CheckRevision(ctx, t, o.Revision); err != nil {
			return err
		}
	}
	if len(names) > 0 {
		return objectKeys(ctx, out, t, names, o)
	}
	return stream(ctx, out, t, o)
}

// stream prints a resource's keys page by page.
func stream(ctx context.Context, w io.Writer, t handle.Target, o Options) error {
	// Each page is garbage once printed: the start-up pacing would let
	// many of them pile up beside what is live (a snapshot's index).
	gctune.BoundHeap()
	out := bufio.NewWriter(w)
	list := render.NewStringList(out, o.Output)
	err := etcdview.Keys(ctx, t.Handle, t.Namespace, o.Revision, o.ChunkSize, func(keys []string) error {
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

// objectKeys prints the key of each named object, or with Check what etcd
// holds there; a missing key is an error.
func objectKeys(ctx context.Context, out io.Writer, t handle.Target, names []string, o Options) error {
	infos, err := etcdview.ObjectKeys(ctx, t.Handle, t.Namespace, names, o.Check, o.Revision)
	if err != nil {
		return err
	}
	if !o.Check {
		list := render.NewStringList(out, o.Output)
		for _, info := range infos {
			if err := list.Add(info.Key); err != nil {
				return err
			}
		}
		return list.Close()
	}
	if err := render.Print(out, o.Output, checked(infos, o.Output)); err != nil {
		return err
	}
	return missing(infos)
}

// checked is what --check prints: a table of every key, or as data one
// key's answer, or the list of them.
func checked(infos []etcdview.KeyInfo, f render.Format) any {
	switch {
	case f == render.Table:
		return keyInfoTable(infos)
	case len(infos) == 1:
		return infos[0]
	}
	return infos
}

// missing is the error of checked keys that do not exist, nil when all do.
func missing(infos []etcdview.KeyInfo) error {
	var keys []string
	for _, info := range infos {
		if !info.Exists {
			keys = append(keys, info.Key)
		}
	}
	if len(keys) > 0 {
		return errors.New("no such key: " + strings.Join(keys, ", "))
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
