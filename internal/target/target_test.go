package target_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/restmapper"

	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/storagemap/maptest"
	"github.com/regctl/regctl/internal/target"
)

// storageMap is the map of a default server, built on an ephemeral etcd.
func storageMap(t *testing.T) *storagemap.Map {
	t.Helper()
	s, _ := maptest.Open(t)
	return s.Map
}

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
	m := storageMap(t)
	scope := target.Scope{Namespace: "default"}
	for _, args := range kubectlArgs {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			result := resource.NewFakeBuilder(
				func(schema.GroupVersion) (resource.RESTClient, error) { return nil, nil },
				func() (meta.RESTMapper, error) { return m.RESTMapper(), nil },
				func() (restmapper.CategoryExpander, error) { return restmapper.SimpleCategoryExpander{}, nil },
			).Unstructured().NamespaceParam(scope.Namespace).DefaultNamespace().
				ResourceTypeOrNameArgs(true, args...).RequireObject(false).Do()
			refs, err := target.ParseRefs(args, "", false)
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
			targets, err := target.Types(m, refs, scope)
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

// TestScope resolves one type with each namespace flag as kubectl takes
// them: -n for namespaced resources, refused for a cluster-scoped one named
// alone, passed over among several types; -A for all, never with names.
func TestScope(t *testing.T) {
	m := storageMap(t)
	shop := target.Scope{Namespace: "shop", NamespaceSet: true}
	all := target.Scope{Namespace: "default", AllNamespaces: true}
	for _, tc := range []struct {
		args  []string
		scope target.Scope
		// want is each target's path and namespace, or the error.
		want string
	}{
		{[]string{"pods"}, shop, "pods@shop"},
		{[]string{"pods"}, all, "pods@"},
		{[]string{"nodes"}, target.Scope{Namespace: "default"}, "nodes@"},
		{[]string{"nodes"}, shop, "error: nodes is cluster-scoped: drop `-n shop`"},
		{[]string{"pods,nodes"}, shop, "pods@shop nodes@"},
		{[]string{"pods", "web"}, all, "error: `--all-namespaces` cannot be used with object names: pick a namespace with `-n`"},
		{[]string{"pods"}, target.Scope{Namespace: "Shop"}, "error: invalid namespace \"Shop\" in `-n`: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"},
		{[]string{"pods"}, target.Scope{AllFlag: true}, "error: `-n` is empty: name a namespace, or use `-A` for all namespaces"},
	} {
		refs, err := target.ParseRefs(tc.args, "", false)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		named, err := target.Types(m, refs, tc.scope)
		if err != nil {
			got = []string{"error: " + err.Error()}
		} else {
			for _, n := range named {
				got = append(got, n.Path+"@"+n.Namespace)
			}
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%v with %+v: %s, want %s", tc.args, tc.scope, strings.Join(got, " "), tc.want)
		}
	}
}

// TestSubresourceArguments reads regctl's pods/status NAME form, and
// refuses a slash with nothing after it.
func TestSubresourceArguments(t *testing.T) {
	refs, err := target.ParseRefs([]string{"pods/status", "web", "db"}, "", true)
	if err != nil || len(refs) != 1 || refs[0].Resource != "pods" || refs[0].Subresource != "status" || !slices.Equal(refs[0].Names, []string{"web", "db"}) {
		t.Errorf("pods/status web db: %+v, %v", refs, err)
	}
	if _, err := target.ParseRefs([]string{"pods/", "web"}, "", true); err == nil || !strings.Contains(err.Error(), "name a subresource after the slash") {
		t.Errorf("pods/ web: %v", err)
	}
	if _, err := target.ParseRef([]string{"pods/a", "svc/b"}, "", false); err == nil || err.Error() != "pods and svc are two types: this command works on one at a time" {
		t.Errorf("two types for one: %v", err)
	}
}
