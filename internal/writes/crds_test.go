package writes

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/manifest"
)

// widgetsCRD serves Widget in v1 and v2, and not in v0.
const widgetsCRD = `{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
"metadata": {"name": "widgets.example.com"},
"spec": {"group": "example.com", "names": {"kind": "Widget", "plural": "widgets"}, "scope": "Namespaced",
  "versions": [{"name": "v0", "served": false}, {"name": "v1", "served": true, "storage": true}, {"name": "v2", "served": true}]}}`

func crdObject(doc int, json string) manifest.Object {
	return manifest.Object{Doc: doc, GVK: crdKind, JSON: []byte(json), Name: "widgets.example.com"}
}

// The kinds a manifest's CRDs serve are each served version's; a CRD that
// does not decode, and objects of other kinds, serve nothing.
func TestManifestCRDKinds(t *testing.T) {
	got := manifestCRDKinds([]manifest.Object{
		{Doc: 1, GVK: configMapKind, JSON: []byte(`{"apiVersion": "v1", "kind": "ConfigMap"}`)},
		crdObject(2, widgetsCRD),
		crdObject(3, `{"spec": {"group": 7}}`),
	})
	want := map[schema.GroupVersionKind]bool{
		{Group: "example.com", Version: "v1", Kind: "Widget"}: true,
		{Group: "example.com", Version: "v2", Kind: "Widget"}: true,
	}
	if !maps.Equal(got, want) {
		t.Errorf("kinds %v, want %v", got, want)
	}
}

// In a sandbox, the objects of kinds the manifest's own CRDs serve, and
// the map does not yet, await them; the rest are written first. Off a
// sandbox, in a dry run, or through a subresource, nothing awaits.
func TestAwaitingCRDs(t *testing.T) {
	widgets := coreMap()
	widgets.kinds[crdKind] = &handle.Handle{Path: "customresourcedefinitions.apiextensions.k8s.io", Resource: metav1.APIResource{Group: "apiextensions.k8s.io", Version: "v1", Name: "customresourcedefinitions"}}
	gadget := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gadget"}
	objs := []manifest.Object{
		crdObject(1, widgetsCRD),
		{Doc: 2, GVK: widgetKind, Name: "w"},
		{Doc: 3, GVK: configMapKind, Name: "c"},
		{Doc: 4, GVK: gadget, Name: "g"}, // no CRD of the manifest serves it
	}
	sandbox := sandboxMaps{}
	docs := func(objs []manifest.Object) []int {
		var out []int
		for _, o := range objs {
			out = append(out, o.Doc)
		}
		return out
	}
	for _, tc := range []struct {
		name          string
		m             Manifest
		now, awaiting []int
		servedAlready bool
	}{
		{name: "sandbox", m: Manifest{Maps: sandbox}, now: []int{1, 3, 4}, awaiting: []int{2}},
		{name: "served already", m: Manifest{Maps: sandbox}, servedAlready: true, now: []int{1, 2, 3, 4}},
		{name: "live etcd", m: Manifest{Maps: liveMaps{}}, now: []int{1, 2, 3, 4}},
		{name: "dry run", m: Manifest{Maps: sandbox, DryRun: true}, now: []int{1, 2, 3, 4}},
		{name: "subresource", m: Manifest{Maps: sandbox, Subresource: "status"}, now: []int{1, 2, 3, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := fakeMap{kinds: maps.Clone(widgets.kinds)}
			if tc.servedAlready {
				m.kinds[widgetKind] = &handle.Handle{Path: "widgets.example.com"}
			}
			r := &run{Manifest: tc.m, m: m}
			now, awaiting := r.awaitingCRDs(objs)
			if !slices.Equal(docs(now), tc.now) || !slices.Equal(docs(awaiting), tc.awaiting) {
				t.Errorf("now %v, awaiting %v; want %v and %v", docs(now), docs(awaiting), tc.now, tc.awaiting)
			}
		})
	}
}

// The CRDs written through the CRD store itself are established once the
// writes are done, in name order, each said on stderr; a CRD's status
// write establishes nothing, nor does anything off a sandbox.
func TestSandboxCRDsEstablishWhatWasWritten(t *testing.T) {
	crds := handle.Target{Handle: &handle.Handle{Path: "customresourcedefinitions.apiextensions.k8s.io", Resource: metav1.APIResource{Group: "apiextensions.k8s.io", Name: "customresourcedefinitions"}}}
	status := handle.Target{Handle: &handle.Handle{Path: "customresourcedefinitions.apiextensions.k8s.io/status", Resource: metav1.APIResource{Group: "apiextensions.k8s.io", Name: "customresourcedefinitions/status"}}}
	crd := func(name string) *apiextensionsv1.CustomResourceDefinition {
		return &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	var asked []string
	establish := func(_ context.Context, names []string) error {
		asked = slices.Clone(names)
		return nil
	}
	c := &sandboxCRDs{on: true}
	c.add(crds, crd("widgets.example.com"))
	c.add(crds, crd("gadgets.example.com"))
	c.add(status, crd("status.example.com"))
	c.add(handle.Target{Handle: &handle.Handle{Path: "configmaps", Resource: metav1.APIResource{Name: "configmaps"}}}, configMap("a"))
	var errOut bytes.Buffer
	if err := c.establish(context.Background(), establish, &errOut); err != nil {
		t.Fatal(err)
	}
	if want := []string{"gadgets.example.com", "widgets.example.com"}; !slices.Equal(asked, want) {
		t.Errorf("established %v, want %v", asked, want)
	}
	want := "customresourcedefinition.apiextensions.k8s.io/gadgets.example.com established (the sandbox runs the apiextensions controllers)\n" +
		"customresourcedefinition.apiextensions.k8s.io/widgets.example.com established (the sandbox runs the apiextensions controllers)\n"
	if errOut.String() != want {
		t.Errorf("stderr %q, want %q", errOut.String(), want)
	}

	off := &sandboxCRDs{}
	off.add(crds, crd("widgets.example.com"))
	if err := off.establish(context.Background(), nil, &errOut); err != nil || len(off.names) != 0 {
		t.Errorf("off a sandbox: noted %v (%v), want nothing", off.names, err)
	}
}

// sandboxMaps and liveMaps are the Maps of a sandbox's etcd and of one a
// server runs on, for a run that plans on a map of its own.
type (
	sandboxMaps struct{ Maps }
	liveMaps    struct{ Maps }
)

func (sandboxMaps) Sandbox() bool { return true }
func (liveMaps) Sandbox() bool    { return false }
