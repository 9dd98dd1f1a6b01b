package served

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/endpoints/deprecation"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/admissionregistration/install"

	"github.com/regctl/regctl/internal/storagemap/serverflags"
)

// deprecatedKind is a kind of kube-apiserver's scheme deprecated at the
// server's version, and one that is not.
func deprecatedKind(t *testing.T) (deprecated, current schema.GroupVersionKind) {
	t.Helper()
	major, minor := serverMajorMinor()
	var kinds []schema.GroupVersionKind
	for gvk := range legacyscheme.Scheme.AllKnownTypes() {
		if gvk.Version != runtime.APIVersionInternal && !strings.HasSuffix(gvk.Kind, "List") {
			kinds = append(kinds, gvk)
		}
	}
	slices.SortFunc(kinds, func(a, b schema.GroupVersionKind) int { return strings.Compare(a.String(), b.String()) })
	for _, gvk := range kinds {
		obj, err := legacyscheme.Scheme.New(gvk)
		if err != nil {
			t.Fatal(err)
		}
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		if deprecation.IsDeprecated(obj, major, minor) {
			deprecated = gvk
		} else if _, ok := obj.(interface{ APILifecycleIntroduced() (int, int) }); ok {
			current = gvk
		}
		if !deprecated.Empty() && !current.Empty() {
			return deprecated, current
		}
	}
	t.Fatalf("no kind of the scheme is deprecated at %d.%d, or none is not", major, minor)
	return
}

// TestWarningsAreTheDeprecationsOfTheKind: a built-in path warns when its
// kind is deprecated at the version of the code regctl is built from (an
// unstamped build, as tests are), naming the kind; a custom resource's
// are its CRD's.
func TestWarningsAreTheDeprecationsOfTheKind(t *testing.T) {
	major, minor := serverMajorMinor()
	if v, err := utilversion.ParseGeneric(serverflags.KubernetesVersion()); err != nil || uint(major) != v.Major() || uint(minor) != v.Minor() {
		t.Errorf("deprecations are read at %d.%d, want the code's version %s", major, minor, serverflags.KubernetesVersion())
	}
	deprecated, current := deprecatedKind(t)
	builtIn := Version{Info: &genericapiserver.APIGroupInfo{Scheme: legacyscheme.Scheme}}
	if w := PathWarnings(builtIn, "x", deprecated); len(w) != 1 || !strings.Contains(w[0], deprecated.GroupVersion().String()+" "+deprecated.Kind+" is deprecated") {
		t.Errorf("%s warns %q", deprecated, w)
	}
	if w := PathWarnings(builtIn, "x", current); w != nil {
		t.Errorf("%s, not deprecated, warns %q", current, w)
	}
	if w := PathWarnings(builtIn, "x", schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}); w != nil {
		t.Errorf("a kind the scheme does not know warns %q", w)
	}
	cr := Version{Warnings: map[string][]string{"widgets": {"example.com/v1beta1 Widget is deprecated"}}}
	if w := PathWarnings(cr, "widgets", deprecated); !slices.Equal(w, cr.Warnings["widgets"]) {
		t.Errorf("a custom resource warns %q, want its CRD's", w)
	}
}
