package writes

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/stores"
	"github.com/regctl/regctl/internal/target"
)

// TestDeleteCheck checks how objects are chosen, without an etcd.
func TestDeleteCheck(t *testing.T) {
	named := []target.Ref{{Resource: "configmaps", Names: []string{"a"}}}
	types := []target.Ref{{Resource: "configmaps,secrets"}}
	for _, c := range []struct {
		name string
		refs []target.Ref
		o    DeleteOptions
		want string
	}{
		{"by name", named, DeleteOptions{}, ""},
		{"by selector", types, DeleteOptions{LabelSelector: "app=web"}, ""},
		{"all", types, DeleteOptions{All: true}, ""},
		{"names and a selector", named, DeleteOptions{LabelSelector: "app=web"}, "name objects or select them with `-l`/`--all`, not both"},
		{"names and all", named, DeleteOptions{All: true}, "name objects or select them with `-l`/`--all`, not both"},
		{"nothing chosen", types, DeleteOptions{}, "name the configmaps,secrets to delete, or pass `-l SELECTOR` or `--all`"},
	} {
		err := c.o.Check(c.refs)
		if c.want == "" && err != nil || c.want != "" && (err == nil || err.Error() != c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func TestNoResources(t *testing.T) {
	if got := noResources(handle.Target{}); got != "No resources found" {
		t.Errorf("across namespaces: %q", got)
	}
	if got := noResources(handle.Target{Namespace: "shop"}); got != "No resources found in shop namespace." {
		t.Errorf("in one namespace: %q", got)
	}
}

// TestUnsafeDeleteWarning says, with the gate off, that the option does
// nothing, as the server drops it; with it on, what it skips.
func TestUnsafeDeleteWarning(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.AllowUnsafeMalformedObjectDeletion, false)
	if got := unsafeDeleteWarning(); !strings.Contains(got, "has no effect") || !strings.Contains(got, "AllowUnsafeMalformedObjectDeletion") {
		t.Errorf("warning with the gate off: %q", got)
	}
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.AllowUnsafeMalformedObjectDeletion, true)
	if got := unsafeDeleteWarning(); !strings.Contains(got, "deleted unread") {
		t.Errorf("warning with the gate on: %q", got)
	}
}

// TestDeletedLine says what was deleted in kubectl delete's words, and
// warns of an object that stays marked for deletion.
func TestDeletedLine(t *testing.T) {
	namespaced := handle.Target{Handle: &handle.Handle{Resource: metav1.APIResource{Kind: "ConfigMap", Namespaced: true}}, Namespace: "shop"}
	cluster := handle.Target{Handle: &handle.Handle{Resource: metav1.APIResource{Kind: "Namespace"}}}
	for _, c := range []struct {
		name        string
		t           handle.Target
		o           DeleteOptions
		obj         runtime.Object
		what        string
		out, errOut string
	}{
		{"deleted", namespaced, DeleteOptions{GracePeriod: -1}, configMap("a"), "deleted", "configmap \"a\" deleted from shop namespace\n", ""},
		{"dry run", namespaced, DeleteOptions{GracePeriod: -1, DryRun: true}, configMap("a"), "deleted", "configmap \"a\" deleted from shop namespace (dry run)\n", ""},
		{"at once", namespaced, DeleteOptions{GracePeriod: 0}, configMap("a"), "deleted", "configmap \"a\" force deleted from shop namespace\n", ""},
		{"marked", cluster, DeleteOptions{GracePeriod: -1}, render.NameOnly(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, "", "shop"), "marked for deletion",
			"namespace \"shop\" deleted\n", "warning: namespace/shop marked for deletion: it stays until its finalizers are done or its grace period ends\n"},
	} {
		var out, errOut bytes.Buffer
		c.o.Out, c.o.ErrOut = &out, &errOut
		if err := c.o.deletedLine(c.t)(c.obj, c.what); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if out.String() != c.out || errOut.String() != c.errOut {
			t.Errorf("%s: %q, %q; want %q, %q", c.name, out.String(), errOut.String(), c.out, c.errOut)
		}
	}
}

// TestDeletedName names a deleted object by what the store returned, or
// by its type's kind when it was deleted unread and nothing came back.
func TestDeletedName(t *testing.T) {
	target := handle.Target{Handle: &handle.Handle{Resource: metav1.APIResource{Group: "apps", Version: "v1", Kind: "Deployment", Namespaced: true}}}
	v := stores.Victim{Namespace: "shop", Name: "web"}
	returned := configMap("a")
	if got := deletedName(target, v, stores.Deleted{Object: returned}); got != runtime.Object(returned) {
		t.Errorf("the store's object: %#v", got)
	}
	got := deletedName(target, v, stores.Deleted{})
	m, err := meta.Accessor(got)
	if err != nil {
		t.Fatal(err)
	}
	if gvk := got.GetObjectKind().GroupVersionKind(); gvk != (schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}) || m.GetNamespace() != "shop" || m.GetName() != "web" {
		t.Errorf("deleted unread: %v %s/%s", gvk, m.GetNamespace(), m.GetName())
	}
}
