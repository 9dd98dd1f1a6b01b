package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubectldiff "k8s.io/kubectl/pkg/cmd/diff"

	"github.com/regctl/regctl/internal/stores"
)

// DiffOptions are kubectl diff's.
type DiffOptions struct {
	// ShowManagedFields keeps metadata.managedFields in the objects
	// compared; ShowSecrets leaves a Secret's data unmasked.
	ShowManagedFields, ShowSecrets bool
	// Program runs diff(1), or $KUBECTL_EXTERNAL_DIFF, on the two
	// directories, as kubectl does.
	Program *kubectldiff.DiffProgram
}

// ErrNoObjects is what a manifest without objects diffs to.
var ErrNoObjects = errors.New("no objects passed to diff")

// Diff is kubectl diff -f without a server: for each object of the
// manifest, the object stored now against the one a write through its
// store would store (a dry-run create when there is none, else a dry-run
// replace, with the stored resourceVersion unless the manifest names one),
// each written as YAML to a LIVE and a MERGED directory under the name
// kubectl gives it, then diffed by kubectl's own code. Its error is the
// diff program's exit status when that is 1 (they differ), or what went
// wrong; an object that cannot be read or written is an error, and then
// nothing is diffed, as with kubectl.
func Diff(ctx context.Context, m Manifest, o DiffOptions) error {
	objs, readErrs := readManifest(m.In, m.Filenames, m.Recursive)
	if len(readErrs) > 0 {
		return refuse(m.ErrOut, readErrs)
	}
	if len(objs) == 0 {
		return ErrNoObjects
	}
	mp, err := m.Open(ctx, kindsOf(objs))
	if err != nil {
		return err
	}
	// The plan resolves and decodes each object, and writes nothing.
	m.AllowPlaintext = true
	m.Verb = Verb{Check: func(context.Context, stores.WriteOptions, stores.Planned, runtime.Object) error { return nil }}
	r := &run{Manifest: m, m: mp, options: stores.WriteOptions{DryRun: true, FieldManager: m.Verb.Options.FieldManager}}
	todo, err := r.plan(ctx, objs, nil)
	if err != nil {
		return err
	}
	differ, err := kubectldiff.NewDiffer("LIVE", "MERGED")
	if err != nil {
		return err
	}
	defer differ.TearDown()
	for _, p := range todo {
		obj, err := r.diffObject(ctx, p)
		if err != nil {
			return fmt.Errorf("%s: %w", plannedName(p), err)
		}
		if err := differ.Diff(obj, kubectldiff.Printer{}, o.ShowManagedFields, o.ShowSecrets); err != nil {
			return err
		}
	}
	return differ.Run(o.Program)
}

// diffObject reads what is stored for p and what writing it would store.
func (r *run) diffObject(ctx context.Context, p stores.Planned) (*diffPair, error) {
	obj, err := p.Decode()
	if err != nil {
		return nil, err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	gvk := p.Source.GVK
	pair := &diffPair{name: diffName(gvk, p.Target.Namespace, m.GetName())}
	live, err := stores.Get(ctx, p.Target, m.GetName())
	switch {
	case apierrors.IsNotFound(err):
		merged, err := stores.Create(ctx, p.Target, asNew(obj), r.options)
		if err != nil {
			return nil, err
		}
		pair.merged, err = asUnstructured(merged, gvk)
		return pair, err
	case err != nil:
		return nil, err
	}
	if pair.live, err = asUnstructured(live, gvk); err != nil {
		return nil, err
	}
	if m.GetResourceVersion() == "" {
		m.SetResourceVersion(pair.live.GetResourceVersion())
	}
	merged, err := stores.Update(ctx, p.Target, obj, r.options)
	if err != nil {
		return nil, err
	}
	pair.merged, err = asUnstructured(merged, gvk)
	return pair, err
}

// diffPair is one object of a diff, as kubectl's diff takes it.
type diffPair struct {
	name   string
	live   *unstructured.Unstructured
	merged *unstructured.Unstructured
}

var _ kubectldiff.Object = &diffPair{}

// Live is nil for an object not stored: kubectl's diff then writes no
// file, and diff -N shows it created.
func (p *diffPair) Live() runtime.Object {
	if p.live == nil {
		return nil
	}
	return p.live
}

func (p *diffPair) Merged() (runtime.Object, error) { return p.merged, nil }
func (p *diffPair) Name() string                    { return p.name }

// diffName is the file kubectl's diff writes an object to:
// [group.]version.Kind.namespace.name.
func diffName(gvk schema.GroupVersionKind, namespace, name string) string {
	group := ""
	if gvk.Group != "" {
		group = gvk.Group + "."
	}
	return fmt.Sprintf("%s%s.%s.%s.%s", group, gvk.Version, gvk.Kind, namespace, name)
}

// asUnstructured is obj as kubectl reads it from the server: its JSON,
// as an unstructured object of gvk.
func asUnstructured(obj runtime.Object, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	u.SetGroupVersionKind(gvk)
	return u, nil
}
