package apply

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/manifest"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/stores"
)

// readManifest reads each -f FILE in turn, standard input for "-", as
// kubectl takes several. With more than one, each object and error names
// its file.
func readManifest(in io.Reader, filenames []string) (objs []manifest.Object, errs []error) {
	if len(filenames) == 0 {
		return nil, []error{fmt.Errorf("`-f` is required: a file, or - for standard input")}
	}
	for i, name := range filenames {
		o, e := readManifestFile(in, name)
		if len(filenames) > 1 {
			manifest.InFile(o, e, name, i)
		}
		objs, errs = append(objs, o...), append(errs, e...)
	}
	return objs, errs
}

func readManifestFile(in io.Reader, filename string) ([]manifest.Object, []error) {
	r := in
	if filename != "-" {
		f, err := os.Open(filename)
		if err != nil {
			return nil, []error{fmt.Errorf("reading %s: %w", filename, err)}
		}
		defer f.Close()
		r = f
	}
	return manifest.Read(r)
}

// planTarget resolves the path and namespace an object is written to: its
// own namespace, or -n's when it names none; a cluster-scoped object has
// none.
func planTarget(m Map, o manifest.Object, scope Scope, subresource string) (stores.Target, error) {
	base, err := resolveKind(m, o.GVK)
	if err != nil {
		return stores.Target{}, err
	}
	h, err := m.Subresource(base, subresource)
	if err != nil {
		return stores.Target{}, err
	}
	t := stores.Target{Handle: h}
	if base.Resource.Namespaced {
		switch {
		case o.Namespace == "":
			t.Namespace = scope.Namespace
		case scope.Explicit && o.Namespace != scope.Namespace:
			return stores.Target{}, fmt.Errorf("the object's namespace %q does not match `-n %s`", o.Namespace, scope.Namespace)
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
	reportAll(errOut, errs)
	return errors.New("nothing was written")
}
