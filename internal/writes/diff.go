package writes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/resource"
	kubectldiff "k8s.io/kubectl/pkg/cmd/diff"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/regctl/regctl/internal/manifest"
	"github.com/regctl/regctl/internal/storedvalue"
	"github.com/regctl/regctl/internal/stores"
)

// DiffOptions are kubectl diff's.
type DiffOptions struct {
	// ShowManagedFields keeps metadata.managedFields in the objects
	// compared; ShowSecrets leaves a Secret's data unmasked.
	ShowManagedFields, ShowSecrets bool
	// ServerSide merges as server-side apply does (--server-side), as
	// FieldManager, taking fields others own with ForceConflicts; without
	// it, as client-side apply does: a three-way strategic merge with the
	// object's last-applied-configuration, by kubectl's own patcher.
	ServerSide, ForceConflicts bool
	// FieldManager, when set, is --field-manager; kubectl's default
	// otherwise.
	FieldManager string
	// Program runs diff(1), or $KUBECTL_EXTERNAL_DIFF, on the two
	// directories, as kubectl does.
	Program *kubectldiff.DiffProgram
}

// ErrNoObjects is what a manifest without objects diffs to.
var ErrNoObjects = errors.New("no objects passed to diff")

// Diff is kubectl diff -f, run by kubectl's own code against the map's
// server: the request handlers of kube-apiserver (and of its CRD handler),
// served in-process through the loopback client (Maps.Server), on the stores
// of the map. kubectl reads the manifest, gets each object, computes what
// an apply would send (a three-way patch from last-applied-configuration,
// or a server-side apply), sends it as a dry run, and hands LIVE and MERGED
// to its diff program; the server's patch and apply handlers merge it, and
// its field managers, strategies and validation decide what would be
// stored. Nothing is written.
//
// regctl first reads the manifest to build the map for its kinds, and
// refuses in its own words an object no path of the map stores. Its error
// is the diff program's exit status when that is 1 (they differ), or what
// went wrong; an object that cannot be read or merged is an error, and
// then nothing is diffed, as with kubectl.
func Diff(ctx context.Context, m Manifest, o DiffOptions) error {
	filenames, cleanup, err := stdinAsFile(m.In, m.Filenames)
	if err != nil {
		return err
	}
	defer cleanup()
	objs, readErrs := readManifest(nil, filenames, m.Recursive)
	if len(readErrs) > 0 {
		return refuse(m.ErrOut, readErrs)
	}
	if len(objs) == 0 {
		return ErrNoObjects
	}
	mp, err := m.Maps.Open(ctx, kindsOf(objs))
	if err != nil {
		return err
	}
	if err := prepare(ctx, mp, objs, m); err != nil {
		return err
	}

	getter := newMapClients(m.Maps.Server(), mp.RESTMapper(), m.Scope, m.ErrOut)
	f := cmdutil.NewFactory(getter)
	streams := genericiooptions.IOStreams{In: m.In, Out: m.Out, ErrOut: m.ErrOut}
	cmd := kubectldiff.NewCmdDiff(f, streams)
	flags := map[string]string{"server-side": strconv.FormatBool(o.ServerSide), "force-conflicts": strconv.FormatBool(o.ForceConflicts)}
	if o.FieldManager != "" {
		flags["field-manager"] = o.FieldManager
	}
	for name, value := range flags {
		if err := cmd.Flags().Set(name, value); err != nil {
			return fmt.Errorf("setting kubectl diff's --%s: %w", name, err)
		}
	}
	kd := kubectldiff.NewDiffOptions(streams)
	if o.Program != nil {
		kd.Diff = o.Program
	}
	kd.ShowManagedFields, kd.Concurrency = o.ShowManagedFields, 1
	if err := setShowSecrets(kd, o.ShowSecrets); err != nil {
		return err
	}
	kd.FilenameOptions = resource.FilenameOptions{Filenames: filenames, Recursive: m.Recursive}
	if err := kd.Complete(f, cmd, nil); err != nil {
		return err
	}
	return kd.Run()
}

// stdinAsFile is filenames with "-" read into a file of its own: kubectl's
// builder reads the process's standard input itself, where regctl reads
// in.
func stdinAsFile(in io.Reader, filenames []string) ([]string, func(), error) {
	if !slices.Contains(filenames, "-") {
		return filenames, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "regctl-diff-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	path := filepath.Join(dir, "stdin.yaml")
	f, err := os.Create(path)
	if err == nil {
		_, err = io.Copy(f, in)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("reading standard input: %w", err)
	}
	out := slices.Clone(filenames)
	for i, name := range out {
		if name == "-" {
			out[i] = path
		}
	}
	return out, cleanup, nil
}

// prepare resolves each object to a path of the map, refusing in regctl's
// words those none stores; reads what is stored of it, so that a value
// encrypted with a key the flags lack is one line, said before kubectl
// reads anything; and readies what a dry-run write of it allocates from
// (a service's cluster IP), as the stores do before a write: the server's
// handlers call the services store directly.
func prepare(ctx context.Context, mp Map, objs []manifest.Object, m Manifest) error {
	var errs []error
	for _, o := range objs {
		t, err := planTarget(mp, o, m.Scope, "")
		if err != nil {
			errs = append(errs, &manifest.Error{File: o.File, FileIndex: o.FileIndex, Doc: o.Doc, Item: o.Item, Err: err})
			continue
		}
		var missing *storedvalue.KeyError
		if _, err := stores.GetInternal(ctx, t, o.Name); errors.As(err, &missing) {
			return missing
		}
		if t.Allocators == nil {
			continue
		}
		obj, _, err := stores.DecodeValidating(t, o.JSON, "Ignore")
		if err != nil {
			continue // the server's handler says why
		}
		if err := stores.ReadyAllocatorsFor(ctx, t, obj); err != nil {
			errs = append(errs, &manifest.Error{File: o.File, FileIndex: o.FileIndex, Doc: o.Doc, Item: o.Item, Err: err})
		}
	}
	if len(errs) > 0 {
		return refuse(m.ErrOut, errs)
	}
	return nil
}
