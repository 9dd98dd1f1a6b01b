package writes

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/manifest"
	"github.com/regctl/regctl/internal/render"
)

// awaitingCRDs splits off, in a sandbox, the objects of a manifest that no
// path of the map serves but a CRD of the same manifest will once it is
// established: regctl establishes the CRDs it writes there, and then
// writes these. Elsewhere nothing is split off: on a live etcd only the
// apiserver's controllers establish a CRD, and nothing is established in a
// dry run, so such objects are refused with the rest.
func (r *run) awaitingCRDs(objs []manifest.Object) (now, awaiting []manifest.Object) {
	if !r.establishes() || r.Subresource != "" {
		return objs, nil
	}
	served := manifestCRDKinds(objs)
	if len(served) == 0 {
		return objs, nil
	}
	for _, obj := range objs {
		if _, err := r.m.ResolveKind(obj.GVK); err != nil && served[obj.GVK] {
			awaiting = append(awaiting, obj)
			continue
		}
		now = append(now, obj)
	}
	return now, awaiting
}

// manifestCRDKinds are the kinds the CRDs of a manifest serve once
// established: each served version of its group, with its kind. A CRD that
// does not decode serves nothing here; its own check says why.
func manifestCRDKinds(objs []manifest.Object) map[schema.GroupVersionKind]bool {
	kinds := map[schema.GroupVersionKind]bool{}
	for _, obj := range objs {
		if obj.GVK != crdKind {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := json.Unmarshal(obj.JSON, crd); err != nil {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Served {
				kinds[schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}] = true
			}
		}
	}
	return kinds
}

var crdKind = apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")

// sandboxCRDs are the CRDs a command wrote in a sandbox, where no server
// runs the apiextensions controllers that would establish them: regctl
// runs them once the writes are done, so that the next command serves
// their custom resources.
type sandboxCRDs struct {
	on    bool
	mu    sync.Mutex
	names []string
}

// add notes out when it is a CRD written through the CRD store itself (not
// its status).
func (c *sandboxCRDs) add(t handle.Target, out runtime.Object) {
	if !c.on || t.Resource.Group != apiextensionsv1.GroupName || t.Resource.Name != "customresourcedefinitions" {
		return
	}
	m, err := meta.Accessor(out)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.names = append(c.names, m.GetName())
}

// establish establishes the CRDs noted with establish, and says so on
// errOut, one line each.
func (c *sandboxCRDs) establish(ctx context.Context, establish func(context.Context, []string) error, errOut io.Writer) error {
	if len(c.names) == 0 {
		return nil
	}
	slices.Sort(c.names)
	if err := establish(ctx, c.names); err != nil {
		return err
	}
	p, err := render.NamePrinter("established (the sandbox runs the apiextensions controllers)")
	if err != nil {
		return err
	}
	for _, name := range c.names {
		if err := p.PrintObj(render.NameOnly(crdKind, "", name), errOut); err != nil {
			return err
		}
	}
	return nil
}
