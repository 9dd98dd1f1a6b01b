package writes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/manifest"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/stores"
)

// readManifest reads each -f FILE in turn, standard input for "-", as
// kubectl takes several: a directory stands for its .json, .yaml and .yml
// files, and with recursive for those of its subdirectories too, as
// kubectl's resource builder expands it. With more than one file, each
// object and error names its file.
func readManifest(in io.Reader, filenames []string, recursive bool) (objs []manifest.Object, errs []error) {
	if len(filenames) == 0 {
		return nil, []error{fmt.Errorf("`-f` is required: a file, a directory, or - for standard input")}
	}
	var files []string
	for _, name := range filenames {
		expanded, err := expandPath(name, recursive)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		files = append(files, expanded...)
	}
	several := len(files) > 1 || len(filenames) > 1
	for i, name := range files {
		o, e := readManifestFile(in, name)
		if several {
			manifest.InFile(o, e, name, i)
		}
		objs, errs = append(objs, o...), append(errs, e...)
	}
	return objs, errs
}

// expandPath is the files -f path names, with the resource builder's own
// walk: the path itself when it is a file, whatever its extension; a
// directory's files with kubectl's extensions, its subdirectories' too when
// recursive.
func expandPath(path string, recursive bool) ([]string, error) {
	if path == "-" {
		return []string{path}, nil
	}
	visitors, err := resource.ExpandPathsToFileVisitors(nil, path, recursive, resource.FileExtensions, nil)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, unwrapPathError(err))
	}
	var files []string
	for _, v := range visitors {
		if f, ok := v.(*resource.FileVisitor); ok {
			files = append(files, f.Path)
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("reading %s: no manifest in it: recognized file extensions are %s", path, strings.Join(resource.FileExtensions, ", "))
	}
	return files, nil
}

// unwrapPathError is a walk's error without the path it names again.
func unwrapPathError(err error) error {
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		return pathErr.Err
	}
	return err
}

func readManifestFile(in io.Reader, filename string) ([]manifest.Object, []error) {
	r := in
	if filename != "-" {
		f, err := os.Open(filename)
		if err != nil {
			return nil, []error{fmt.Errorf("reading %s: %w", filename, unwrapPathError(err))}
		}
		defer f.Close()
		r = f
	}
	objs, errs := manifest.Read(r)
	for i, err := range errs {
		if errors.Is(err, manifest.ErrBinary) {
			source := filename
			if filename == "-" {
				source = "standard input"
			}
			errs[i] = fmt.Errorf("reading %s: %w", source, err)
		}
	}
	return objs, errs
}

// planTarget resolves the path and namespace an object is written to: its
// own namespace, or -n's when it names none; a cluster-scoped object has
// none.
func planTarget(m Map, o manifest.Object, scope Scope, subresource string) (handle.Target, error) {
	base, err := resolveKind(m, o.GVK)
	if err != nil {
		return handle.Target{}, err
	}
	h, err := m.Subresource(base, subresource)
	if err != nil {
		return handle.Target{}, err
	}
	t := handle.Target{Handle: h}
	if base.Resource.Namespaced {
		switch {
		case o.Namespace == "":
			t.Namespace = scope.Namespace
		case scope.Explicit && o.Namespace != scope.Namespace:
			return handle.Target{}, fmt.Errorf("the object's namespace %q does not match `-n %s`", o.Namespace, scope.Namespace)
		default:
			t.Namespace = o.Namespace
		}
	}
	return t, nil
}

// resolveKind finds the resource a manifest object belongs to by its
// apiVersion and kind, as kubectl maps them, among the map's resources,
// and says why none serves it: a CRD not established, a group version or
// a kind the map does not serve.
func resolveKind(m Map, gvk schema.GroupVersionKind) (*handle.Handle, error) {
	h, err := m.ResolveKind(gvk)
	switch {
	case err == nil:
		return h, nil
	case m.NotEstablished(gvk) != "":
		return nil, fmt.Errorf("%s %s is not served: customresourcedefinition %s is not established, and a server serves only established CRDs (its apiextensions controllers establish them)", gvk.GroupVersion(), gvk.Kind, m.NotEstablished(gvk))
	case !m.Serves(gvk.GroupVersion()):
		return nil, fmt.Errorf("apiVersion %q is not served (see `regctl routes -o wide`)", gvk.GroupVersion())
	}
	return nil, fmt.Errorf("unknown kind %q in %s (see `regctl routes -o wide`)", gvk.Kind, gvk.GroupVersion())
}

// checkPlaintext refuses, once per path, to write in plain text a resource
// whose stored values are encrypted, unless `--allow-plaintext`. It looks at
// every object, those that failed their own checks too: without the
// encryption config, a replace of an encrypted object fails to read it, and
// this says why.
func (r *run) checkPlaintext(ctx context.Context, objs []manifest.Object) []error {
	if r.AllowPlaintext {
		return nil
	}
	var errs []error
	seen := map[string]bool{}
	for _, obj := range objs {
		t, err := planTarget(r.m, obj, r.Scope, r.Subresource)
		if err != nil || seen[t.Path] {
			continue
		}
		seen[t.Path] = true
		if err := stores.CheckPlaintext(ctx, t.Handle); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// reportAll prints each error on its own line, in document order: they are
// gathered step by step (reading, then checking), not document by document.
func reportAll(errOut io.Writer, errs []error) {
	slices.SortStableFunc(errs, func(a, b error) int {
		var ea, eb *manifest.Error
		if !errors.As(a, &ea) || !errors.As(b, &eb) {
			return 0
		}
		return manifest.Before(ea.At(), eb.At())
	})
	for _, err := range errs {
		fmt.Fprintf(errOut, "error: %s\n", render.OneLine(err))
	}
}

// refuse reports every problem of a manifest and says nothing was written.
func refuse(errOut io.Writer, errs []error) error {
	if len(errs) == 1 {
		return fmt.Errorf("%w: nothing was written", errs[0])
	}
	reportAll(errOut, errs)
	return errors.New("nothing was written")
}
