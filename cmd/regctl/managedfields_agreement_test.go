package main

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/regctl/regctl/test/apiserver"
)

// fieldsCase is an object written the same way through the server and
// through regctl: created from new, then server-side applied by another
// manager and replaced.
type fieldsCase struct {
	gvr schema.GroupVersionResource
	// object is the manifest of the object named name.
	object func(name string) map[string]any
	// change edits the applied object into the replace's body.
	change func(obj map[string]any)
}

var fieldsCases = []fieldsCase{{
	gvr: corev1.SchemeGroupVersion.WithResource("configmaps"),
	object: func(name string) map[string]any {
		return map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "labels": map[string]any{"app": "shop"}},
			"data":     map[string]any{"a": "1"},
		}
	},
	change: func(obj map[string]any) {
		obj["data"].(map[string]any)["b"] = "2"
	},
}, {
	// Containers are a list keyed by name in the OpenAPI models, atomic
	// to a field manager that deduces types.
	gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
	object: func(name string) map[string]any {
		labels := map[string]any{"app": name}
		return map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": name},
			"spec": map[string]any{
				"selector": map[string]any{"matchLabels": labels},
				"template": map[string]any{
					"metadata": map[string]any{"labels": labels},
					"spec": map[string]any{"containers": []any{
						map[string]any{"name": "web", "image": "nginx"},
					}},
				},
			},
		}
	},
	change: func(obj map[string]any) {
		spec := obj["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		spec["containers"] = append(spec["containers"].([]any), map[string]any{"name": "sidecar", "image": "busybox"})
	},
}, {
	// metadata.finalizers is a set in the models the CRD handler merges
	// the CRD's schema into, atomic to a field manager that deduces types.
	gvr: widgetsV1,
	object: func(name string) map[string]any {
		return map[string]any{
			"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": name, "finalizers": []any{"example.com/keep"}},
			"spec":     map[string]any{"size": "large"},
		}
	},
	change: func(obj map[string]any) {
		obj["spec"].(map[string]any)["color"] = "red"
		m := obj["metadata"].(map[string]any)
		m["finalizers"] = append(m["finalizers"].([]any), "example.com/also")
	},
}}

// TestManagedFieldsAgreeWithKubeAPIServer writes the same objects through
// a real kube-apiserver and through regctl, and holds regctl's
// managedFields to the server's: a create records the manager's fields
// (regctl's own name, or --field-manager's), and a replace whose body has
// no managedFields keeps those a server-side apply recorded and adds the
// replacing manager's, as the server's PUT does.
func TestManagedFieldsAgreeWithKubeAPIServer(t *testing.T) {
	t.Parallel()
	s := apiserver.Start(t)
	apiserver.CreateWidgetsCRD(t, s)
	etcdFlag := "--etcd-servers=" + s.EtcdURL
	ctx := context.Background()
	const ns = "fields"
	if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	get := func(t *testing.T, gvr schema.GroupVersionResource, name string) *unstructured.Unstructured {
		t.Helper()
		u, err := s.Dynamic.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("reading %s %s: %v", gvr.Resource, name, err)
		}
		return u
	}
	for _, c := range fieldsCases {
		for _, manager := range []string{"", "deployer"} {
			// The server is asked for the manager regctl records; regctl
			// for its own by default.
			serverManager, flags := cmp.Or(manager, "regctl"), []string{"-n", ns, etcdFlag}
			if manager != "" {
				flags = append(flags, "--field-manager="+manager)
			}
			name := c.gvr.Resource + "-" + serverManager
			t.Run("create "+name, func(t *testing.T) {
				created, err := s.Dynamic.Resource(c.gvr).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: c.object("server-" + name)}, metav1.CreateOptions{FieldManager: serverManager})
				if err != nil {
					t.Fatal(err)
				}
				mustRun(t, append([]string{"create", "-f", manifestFile(t, js(t, c.object("regctl-"+name)))}, flags...)...)
				if got, want := managedFields(t, get(t, c.gvr, "regctl-"+name)), managedFields(t, created); got != want {
					t.Errorf("after regctl's create, managedFields are\n%s\nafter the server's\n%s", got, want)
				}
			})
			t.Run("replace "+name, func(t *testing.T) {
				// The same server-side apply of both objects.
				for _, prefix := range []string{"server-", "regctl-"} {
					applied := &unstructured.Unstructured{Object: c.object(prefix + "applied-" + name)}
					if _, err := s.Dynamic.Resource(c.gvr).Namespace(ns).Apply(ctx, applied.GetName(), applied, metav1.ApplyOptions{FieldManager: "ssa-owner"}); err != nil {
						t.Fatal(err)
					}
				}
				// A body without managedFields, at the version stored.
				body := func(name string) *unstructured.Unstructured {
					obj := c.object(name)
					c.change(obj)
					u := &unstructured.Unstructured{Object: obj}
					u.SetNamespace(ns)
					u.SetResourceVersion(get(t, c.gvr, name).GetResourceVersion())
					return u
				}
				replaced, err := s.Dynamic.Resource(c.gvr).Namespace(ns).Update(ctx, body("server-applied-"+name), metav1.UpdateOptions{FieldManager: serverManager})
				if err != nil {
					t.Fatal(err)
				}
				mustRun(t, append([]string{"replace", "-f", manifestFile(t, js(t, body("regctl-applied-"+name).Object))}, flags...)...)
				got := get(t, c.gvr, "regctl-applied-"+name)
				if got, want := managedFields(t, got), managedFields(t, replaced); got != want {
					t.Errorf("after regctl's replace, managedFields are\n%s\nafter the server's\n%s", got, want)
				}
				if !slices.ContainsFunc(got.GetManagedFields(), func(e metav1.ManagedFieldsEntry) bool {
					return e.Manager == "ssa-owner" && e.Operation == metav1.ManagedFieldsOperationApply
				}) {
					t.Errorf("regctl's replace dropped the server-side apply's entry: %s", managedFields(t, got))
				}
			})
		}
	}
	t.Run("a --field-manager the server refuses is refused", func(t *testing.T) {
		long := strings.Repeat("m", 129)
		cm := &unstructured.Unstructured{Object: fieldsCases[0].object("long-manager")}
		if _, err := s.Dynamic.Resource(fieldsCases[0].gvr).Namespace(ns).Create(ctx, cm, metav1.CreateOptions{FieldManager: long}); !apierrors.IsInvalid(err) {
			t.Fatalf("the server's create with a fieldManager of 129 bytes: %v, want Invalid", err)
		}
		for _, verb := range []string{"create", "replace"} {
			_, stderr, code := run(t, verb, "-f", manifestFile(t, js(t, cm.Object)), "-n", ns, "--field-manager="+long, etcdFlag)
			if code != 1 || !strings.HasPrefix(stderr, "error: `--field-manager`: fieldManager: Too long") || strings.Count(stderr, "\n") != 1 {
				t.Errorf("%s --field-manager=<129 bytes>: exit %d: %s", verb, code, stderr)
			}
		}
	})
}

// managedFields is an object's managedFields as JSON, times aside, in an
// order that does not depend on them either (the server sorts entries by
// time).
func managedFields(t *testing.T, u *unstructured.Unstructured) string {
	t.Helper()
	entries := u.GetManagedFields()
	for i := range entries {
		entries[i].Time = nil
	}
	slices.SortFunc(entries, func(a, b metav1.ManagedFieldsEntry) int {
		return cmp.Or(cmp.Compare(a.Manager, b.Manager), cmp.Compare(a.Operation, b.Operation), cmp.Compare(a.Subresource, b.Subresource))
	})
	out, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
