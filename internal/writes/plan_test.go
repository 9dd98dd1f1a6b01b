package writes

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/manifest"
)

// fakeMap serves the kinds it holds, and a status subresource of each;
// pending are the kinds of CRDs not established, by the CRD's name.
type fakeMap struct {
	kinds   map[schema.GroupVersionKind]*handle.Handle
	pending map[schema.GroupVersionKind]string
}

func (m fakeMap) ResolveKind(gvk schema.GroupVersionKind) (*handle.Handle, error) {
	if h, ok := m.kinds[gvk]; ok {
		return h, nil
	}
	return nil, fmt.Errorf("no kind %s", gvk)
}

func (m fakeMap) Subresource(h *handle.Handle, sub string) (*handle.Handle, error) {
	switch sub {
	case "":
		return h, nil
	case "status":
		return &handle.Handle{Path: h.Path + "/status", Resource: h.Resource}, nil
	}
	return nil, fmt.Errorf("%s has no subresource %q", h.Path, sub)
}

func (m fakeMap) NotEstablished(gvk schema.GroupVersionKind) string { return m.pending[gvk] }

func (m fakeMap) Serves(gv schema.GroupVersion) bool {
	for gvk := range m.kinds {
		if gvk.GroupVersion() == gv {
			return true
		}
	}
	return false
}

// RESTMapper is kubectl's names of the map, which planning does not use.
func (m fakeMap) RESTMapper() meta.RESTMapper { return nil }

func (m fakeMap) Handle(path string) (*handle.Handle, error) {
	for _, h := range m.kinds {
		if h.Path == path {
			return h, nil
		}
	}
	return nil, fmt.Errorf("no path %s", path)
}

var (
	namespaceKind = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
	widgetKind    = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
)

// coreMap serves config maps (namespaced) and namespaces (cluster-scoped).
func coreMap() fakeMap {
	return fakeMap{kinds: map[schema.GroupVersionKind]*handle.Handle{
		configMapKind: {Path: "configmaps", Resource: metav1.APIResource{Name: "configmaps", Version: "v1", Kind: "ConfigMap", Namespaced: true}},
		namespaceKind: {Path: "namespaces", Resource: metav1.APIResource{Name: "namespaces", Version: "v1", Kind: "Namespace"}},
	}}
}

// An object goes to its own namespace, or -n's when it names none; -n given
// and another namespace in the object is refused; a cluster-scoped object
// has no namespace whatever either says.
func TestPlanTargetNamespace(t *testing.T) {
	m := coreMap()
	for _, tc := range []struct {
		name    string
		obj     manifest.Object
		scope   Scope
		want    string
		wantErr string
	}{
		{"none in the object: -n", manifest.Object{GVK: configMapKind}, Scope{Namespace: "shop"}, "shop", ""},
		{"none in the object: -n's default", manifest.Object{GVK: configMapKind}, Scope{Namespace: "default"}, "default", ""},
		{"the object's over the default", manifest.Object{GVK: configMapKind, Namespace: "shop"}, Scope{Namespace: "default"}, "shop", ""},
		{"the object's, the same as -n", manifest.Object{GVK: configMapKind, Namespace: "shop"}, Scope{Namespace: "shop", Explicit: true}, "shop", ""},
		{"the object's, not -n's", manifest.Object{GVK: configMapKind, Namespace: "shop"}, Scope{Namespace: "web", Explicit: true}, "", "the object's namespace \"shop\" does not match `-n web`"},
		{"cluster-scoped", manifest.Object{GVK: namespaceKind, Namespace: "shop"}, Scope{Namespace: "web", Explicit: true}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target, err := planTarget(m, tc.obj, tc.scope, "")
			switch {
			case tc.wantErr != "":
				if err == nil || err.Error() != tc.wantErr {
					t.Errorf("err %v, want %q", err, tc.wantErr)
				}
			case err != nil:
				t.Errorf("err %v", err)
			case target.Namespace != tc.want:
				t.Errorf("namespace %q, want %q", target.Namespace, tc.want)
			}
		})
	}
}

// A subresource's target is its own path, scoped by its resource.
func TestPlanTargetSubresource(t *testing.T) {
	target, err := planTarget(coreMap(), manifest.Object{GVK: configMapKind}, Scope{Namespace: "shop"}, "status")
	if err != nil || target.Path != "configmaps/status" || target.Namespace != "shop" {
		t.Errorf("target %s in %q (%v), want configmaps/status in shop", target.Path, target.Namespace, err)
	}
	if _, err := planTarget(coreMap(), manifest.Object{GVK: configMapKind}, Scope{Namespace: "shop"}, "scale"); err == nil {
		t.Error("a subresource the path does not have was planned")
	}
}

// A kind no path serves says why: its CRD is not established, its group
// version is not served, or its group version has no such kind.
func TestResolveKindSaysWhyAKindIsNotServed(t *testing.T) {
	m := coreMap()
	m.pending = map[schema.GroupVersionKind]string{widgetKind: "widgets.example.com"}
	for gvk, want := range map[schema.GroupVersionKind]string{
		widgetKind: "example.com/v1 Widget is not served: customresourcedefinition widgets.example.com is not established, and a server serves only established CRDs (its apiextensions controllers establish them)",
		{Group: "example.com", Version: "v2", Kind: "Widget"}: "apiVersion \"example.com/v2\" is not served (see `regctl routes -o wide`)",
		{Version: "v1", Kind: "Pod"}:                          "unknown kind \"Pod\" in v1 (see `regctl routes -o wide`)",
	} {
		if _, err := resolveKind(m, gvk); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", gvk, err, want)
		}
	}
	if h, err := resolveKind(m, configMapKind); err != nil || h.Path != "configmaps" {
		t.Errorf("ConfigMap: %v, %v", h, err)
	}
}

// Errors gathered step by step are printed in the order of the files and
// documents, each on one line.
func TestReportAllInDocumentOrder(t *testing.T) {
	at := func(fileIndex, doc, item int, msg string) error {
		file := ""
		if fileIndex > 0 {
			file = fmt.Sprintf("f%d.yaml", fileIndex)
		}
		return &manifest.Error{File: file, FileIndex: fileIndex, Doc: doc, Item: item, Err: errors.New(msg)}
	}
	var errOut bytes.Buffer
	err := refuse(&errOut, []error{
		at(0, 3, 0, "third"),
		at(0, 1, 2, "first, item 2"),
		at(1, 1, 0, "second file"),
		at(0, 1, 1, "first, item 1"),
		at(0, 2, 0, "second\non two lines"),
	})
	if err == nil || err.Error() != "nothing was written" {
		t.Errorf("refuse: %v, want nothing was written", err)
	}
	want := strings.Join([]string{
		"error: document 1, item 1: first, item 1",
		"error: document 1, item 2: first, item 2",
		"error: document 2: second on two lines",
		"error: document 3: third",
		"error: f1.yaml, document 1: second file",
		"",
	}, "\n")
	if errOut.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", errOut.String(), want)
	}
}

// With several files each object and error names its file; a missing one
// is an error of its own, and the others are still read.
func TestReadManifestNamesItsFiles(t *testing.T) {
	if _, errs := readManifest(nil, nil, false); len(errs) != 1 || !strings.Contains(errs[0].Error(), "`-f` is required") {
		t.Errorf("no file: %v, want -f required", errs)
	}
	in := strings.NewReader("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
	objs, errs := readManifest(in, []string{"-", "/nonexistent/b.yaml"}, false)
	if len(objs) != 1 || objs[0].File != "-" || objs[0].Name != "a" {
		t.Errorf("objects %+v, want a from -", objs)
	}
	if len(errs) != 1 || errs[0].Error() != "reading /nonexistent/b.yaml: no such file or directory" {
		t.Errorf("errors %v, want the missing file's", errs)
	}
}
