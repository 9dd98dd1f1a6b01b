package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/restmapper"
)

// kubectlArgs are argument lists as users give them to kubectl get and
// delete: accepted ones (a type, types, names of a type, TYPE/NAME of one
// or several types) and refused ones (TYPE NAME mixed with TYPE/NAME, more
// than one slash, a half-empty TYPE/NAME, types in TYPE/NAME).
var kubectlArgs = [][]string{
	{"pods"},
	{"pods,services"},
	{"pods", "p1", "p2"},
	{"pods,svc", "web", "db"},
	{"pods/p1", "svc/web"},
	{"pods/a", "pods/b"},
	{"pods/a", "svc/b", "po/c"},
	{"deploy/web", "cm/settings", "nodes/node-1", "deployments.v1.apps/api"},
	{"pods", "pods/p1"},
	{"pods/p1", "p2"},
	{"pods/a/b"},
	{"pods/"},
	{"/p1"},
	{"pods,svc/p1"},
	{"pods/a", "svc/"},
}

// TestArgumentsAreReadAsKubectlsBuilderReadsThem drives cli-runtime's
// resource builder, as kubectl get does (ResourceTypeOrNameArgs), with
// regctl's map's RESTMapper, on each argument list: regctl accepts what it
// accepts, refuses what it refuses with its message, and names the same
// objects of the same types in the same order.
func TestArgumentsAreReadAsKubectlsBuilderReadsThem(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	w := s.session(t)
	defer w.Close()
	scope := scopeOptions{Namespace: "default"}
	for _, args := range kubectlArgs {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			result := resource.NewFakeBuilder(
				func(schema.GroupVersion) (resource.RESTClient, error) { return nil, nil },
				func() (meta.RESTMapper, error) { return w.Map.RESTMapper(), nil },
				func() (restmapper.CategoryExpander, error) { return restmapper.SimpleCategoryExpander{}, nil },
			).Unstructured().NamespaceParam(scope.Namespace).DefaultNamespace().
				ResourceTypeOrNameArgs(true, args...).RequireObject(false).Do()
			refs, err := parseObjectRefs(args, "", false)
			if kerr := result.Err(); kerr != nil || err != nil {
				switch {
				case kerr == nil:
					t.Fatalf("regctl refuses what kubectl accepts: %v", err)
				case err == nil:
					t.Fatalf("regctl accepts what kubectl refuses: %v", kerr)
				case err.Error() != kerr.Error():
					t.Fatalf("regctl says %q, kubectl %q", err, kerr)
				}
				return
			}
			hasNames, err := resource.HasNames(args)
			if err != nil || !hasNames {
				if len(refs) != 1 || len(refs[0].Names) > 0 {
					t.Errorf("kubectl lists types, regctl reads %+v", refs)
				}
				return
			}
			var want []string
			err = result.Visit(func(info *resource.Info, err error) error {
				want = append(want, fmt.Sprintf("%s %s", info.Mapping.Resource.GroupResource(), info.Name))
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			targets, err := resolveTypes(w.Map, refs, scope)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tg := range targets {
				for _, name := range tg.Names {
					got = append(got, fmt.Sprintf("%s %s", schema.GroupResource{Group: tg.Route.Group, Resource: tg.Route.Resource}, name))
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("regctl names %q, kubectl %q", got, want)
			}
		})
	}
}

// TestTypeNameArgumentsEndToEnd reads and deletes objects named TYPE/NAME,
// of one type and of several, on a sandbox etcd.
func TestTypeNameArgumentsEndToEnd(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	s.createPods(t, "default", 3, nil)
	mustRun(t, "create", "-f", manifestFile(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: default}\n"), s.flag())

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "pods/pod-00000", "configmaps/settings", "-o", "name"}, "pod/pod-00000\nconfigmap/settings\n"},
		{[]string{"get", "pods/pod-00002", "cm/settings", "po/pod-00001", "-o", "name"}, "pod/pod-00002\nconfigmap/settings\npod/pod-00001\n"},
		{[]string{"get", "pods", "pod-00001", "pod-00000", "-o", "name"}, "pod/pod-00001\npod/pod-00000\n"},
		{[]string{"get", "pods,configmaps", "-o", "name"}, "pod/pod-00000\npod/pod-00001\npod/pod-00002\nconfigmap/settings\n"},
	} {
		if got := mustRun(t, append(tc.args, s.flag())...); got != tc.want {
			t.Errorf("%v: got\n%s\nwant\n%s", tc.args, got, tc.want)
		}
	}

	// A mix is refused with kubectl's message, before anything is read.
	_, kerr := resource.HasNames([]string{"pods", "pods/pod-00000"})
	if _, stderr, code := run(t, "get", "pods", "pods/pod-00000", s.flag()); code == 0 || kerr == nil || stderr != "error: "+kerr.Error()+"\n" {
		t.Errorf("exit %d, stderr %q; want kubectl's %v", code, stderr, kerr)
	}

	stdout, stderr, code := run(t, "delete", "pods/pod-00000", "configmaps/settings", "pods/pod-00001", "--grace-period=0", s.flag())
	if code != 0 {
		t.Fatalf("delete: exit %d: %s", code, stderr)
	}
	if want := "pod \"pod-00000\" force deleted from default namespace\nconfigmap \"settings\" force deleted from default namespace\npod \"pod-00001\" force deleted from default namespace\n"; stdout != want {
		t.Errorf("delete: stdout %q, want %q", stdout, want)
	}
	if got := mustRun(t, "get", "pods,configmaps", "-o", "name", s.flag()); got != "pod/pod-00002\n" {
		t.Errorf("after delete, left:\n%s", got)
	}
}
