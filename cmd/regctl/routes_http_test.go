package main

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/cli/routescmd"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/routetable"
)

func TestRoutesHTTPGolden(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := run(t, "routes", "--http")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	releaseGolden(t, "routes-http.txt", stdout)
}

// httpRoutes runs `routes --http -o json` with args and decodes the table.
func httpRoutes(t *testing.T, args ...string) routetable.HTTPRouteTable {
	t.Helper()
	stdout, stderr, code := run(t, append([]string{"routes", "--http", "-o", "json"}, args...)...)
	if code != 0 || stderr != "" {
		t.Fatalf("routes --http %v: exit %d, stderr %q", args, code, stderr)
	}
	var tab routetable.HTTPRouteTable
	if err := json.Unmarshal([]byte(stdout), &tab); err != nil {
		t.Fatal(err)
	}
	return tab
}

func TestRoutesHTTPFilters(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := run(t, "routes", "--http", "--resource", "pods", "--verb", "watch,watchlist")
	want := `METHOD   PATH                                               ACTION      RESOURCE
GET      /api/v1/watch/namespaces/{namespace}/pods          watchlist   pods
GET      /api/v1/watch/namespaces/{namespace}/pods/{name}   watch       pods
GET      /api/v1/watch/pods                                 watchlist   pods
`
	if code != 0 || stderr != "" || stdout != want {
		t.Errorf("--resource pods --verb watch,watchlist: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, stderr, stdout, want)
	}

	// A resource names its subresources; a subresource itself.
	resources := map[string]bool{}
	for _, r := range httpRoutes(t, "--resource", "deployments", "--api-group", "apps").Routes {
		resources[r.Resource] = true
		if r.APIVersion() != "apps/v1" || r.Kind == "" || !r.Namespaced || r.Storage == "" {
			t.Errorf("route %+v: want apps/v1, a kind, namespaced, a storage type", r)
		}
	}
	if !reflect.DeepEqual(resources, map[string]bool{"deployments": true, "deployments/scale": true, "deployments/status": true}) {
		t.Errorf("--resource deployments reaches %v", resources)
	}
	for _, r := range httpRoutes(t, "--resource", "pods/status").Routes {
		if r.Resource != "pods/status" {
			t.Errorf("--resource pods/status: route %s %s reaches %s", r.Method, r.Path, r.Resource)
		}
	}

	// The action is the installer's: the same for every method of a
	// connecter.
	for _, r := range httpRoutes(t, "--verb", "connect", "--api-group", "core").Routes {
		if r.Action != "connect" || !strings.Contains(r.Path, "/{name}/") {
			t.Errorf("--verb connect: %+v", r)
		}
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--http", "--resource", "pod"}, `error: no resource "pod" in the HTTP routes: it has `},
		{[]string{"--http", "--verb", "update"}, `error: no action "update" in the HTTP routes: it has connect, delete, deletecollection, get, list, patch, post, put, watch, watchlist` + "\n"},
		{[]string{"--http", "--api-group", "apss"}, `error: no API group "apss" in the map`},
		{[]string{"--verb", "get"}, "error: `--resource` and `--verb` filter HTTP routes: add `--http`\n"},
	} {
		_, stderr, code := run(t, append([]string{"routes"}, tc.args...)...)
		if code != 1 || !strings.HasPrefix(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestRoutesHTTPSorted holds the order to groups as `routes` orders them,
// then path, then method.
func TestRoutesHTTPSorted(t *testing.T) {
	t.Parallel()
	tab := httpRoutes(t)
	stdout, _, _ := run(t, "routes", "-o", "yaml")
	var storage routetable.RouteTable
	if err := yaml.Unmarshal([]byte(stdout), &storage); err != nil {
		t.Fatal(err)
	}
	if got, want := tab.Groups(), storage.Groups(); !reflect.DeepEqual(got, want) {
		t.Errorf("groups %v, want the route table's %v", got, want)
	}
	if tab.Kind != routetable.HTTPKind || tab.FormatVersion != routetable.HTTPFormatVersion || tab.KubernetesVersion != storage.KubernetesVersion {
		t.Errorf("table kind %q, format %d, version %q", tab.Kind, tab.FormatVersion, tab.KubernetesVersion)
	}
	for i := 1; i < len(tab.Routes); i++ {
		a, b := tab.Routes[i-1], tab.Routes[i]
		if a.APIVersion() == b.APIVersion() && (a.Path > b.Path || a.Path == b.Path && a.Method >= b.Method) {
			t.Errorf("%s %s before %s %s", a.Method, a.Path, b.Method, b.Path)
		}
	}
}

func TestRoutesHTTPFollowsRuntimeConfig(t *testing.T) {
	t.Parallel()
	off := httpRoutes(t, "--runtime-config=batch/v1/cronjobs=false,autoscaling/v2=false", "--api-group", "batch,autoscaling")
	var left []string
	for _, r := range off.Routes {
		if strings.HasPrefix(r.Resource, "cronjobs") || r.APIVersion() == "autoscaling/v2" {
			t.Errorf("%s %s is still routed", r.Method, r.Path)
		}
		left = append(left, r.APIVersion()+" "+strings.Split(r.Resource, "/")[0])
	}
	slices.Sort(left)
	if got := strings.Join(slices.Compact(left), ","); got != "autoscaling/v1 horizontalpodautoscalers,batch/v1 jobs" {
		t.Errorf("routed: %s, want autoscaling/v1 and jobs alone", got)
	}
}

func TestRoutesHTTPFlags(t *testing.T) {
	t.Parallel()
	var got *routescmd.Options
	cmd := routescmd.New(&cli.Globals{}, func(_ context.Context, o *routescmd.Options) error {
		got = o
		return nil
	})
	cmd.SetArgs([]string{"--http", "--resource", "pods,services", "--verb", "get", "--group", "core", "-o", "yaml"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got == nil || !got.HTTP || !slices.Equal(got.Resources, []string{"pods", "services"}) || !slices.Equal(got.Verbs, []string{"get"}) ||
		!slices.Equal(got.Groups, []string{"core"}) || got.Output != render.YAML {
		t.Errorf("options %+v", got)
	}
}

func TestRoutesHTTPDiff(t *testing.T) {
	t.Parallel()
	doc, _, code := run(t, "routes", "--http", "-o", "yaml")
	if code != 0 {
		t.Fatal("routes --http -o yaml failed")
	}
	saved := writeFile(t, "http.yaml", doc)

	stdout, stderr, code := run(t, "routes", "diff", saved, "live")
	if code != 0 || stdout != "" || stderr != "" {
		t.Errorf("the same flags: exit %d, stdout %q, stderr %q; want 0 and no output", code, stdout, stderr)
	}
	// Turning autoscaling/v2 off removes its routes, and only them.
	stdout, _, code = run(t, "routes", "diff", saved, "live", "--runtime-config=autoscaling/v2=false")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != 1 || len(lines) != 2+14 || lines[1] != "+++ live" || lines[2] != "removed: DELETE /apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers" {
		t.Errorf("autoscaling/v2 off: exit %d, diff:\n%s", code, stdout)
	}
	for _, l := range lines[2:] {
		if !strings.HasPrefix(l, "removed: ") || !strings.Contains(l, " /apis/autoscaling/v2/") {
			t.Errorf("autoscaling/v2 off: %q", l)
		}
	}

	// Two files: a route removed, one added, one changed.
	tab, err := routetable.LoadHTTP(strings.NewReader(doc), saved)
	if err != nil {
		t.Fatal(err)
	}
	edited := tab
	edited.Routes = slices.Clone(tab.Routes)
	gone := edited.Routes[0]
	edited.Routes[1].Action = "list"
	edited.Routes[0].Method = "TRACE"
	asJSON, err := json.Marshal(edited)
	if err != nil {
		t.Fatal(err)
	}
	other := writeFile(t, "edited.json", string(asJSON))
	stdout, stderr, code = run(t, "routes", "diff", saved, other)
	want := "--- " + saved + "\n+++ " + other + "\n" +
		"changed: " + tab.Routes[1].Method + " " + tab.Routes[1].Path + "\n  action: " + tab.Routes[1].Action + " -> list\n" +
		"added: TRACE " + gone.Path + "\n" +
		"removed: " + gone.Method + " " + gone.Path + "\n"
	if code != 1 || stdout != want || stderr != "" {
		t.Errorf("edited: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, stderr, stdout, want)
	}
	if _, _, code := run(t, "routes", "diff", saved, other, "--ignore", "action", "--api-group", "apps"); code != 0 {
		t.Errorf("edited core routes, apps compared: exit %d, want 0", code)
	}
	if _, _, code := run(t, "routes", "--check", saved, "--api-group", "apps"); code != 0 {
		t.Errorf("--check of an HTTP table: exit %d, want 0", code)
	}
	_, stderr, code = run(t, "routes", "--http", "--check", other)
	if want := "hint: if the change is intended, regenerate " + other + " with `regctl routes --http -o yaml > " + other + "` and the same flags\n"; code != 1 || stderr != want {
		t.Errorf("--check of a stale HTTP table: exit %d, stderr %q, want 1 and %q", code, stderr, want)
	}
	_, stderr, code = run(t, "routes", "--http", "--check", committed)
	if want := "error: " + committed + " is a route table: `--http --check` takes an HTTP route table"; code != 2 || !strings.HasPrefix(stderr, want) {
		t.Errorf("--http --check of a route table: exit %d, stderr %q, want 2 and %q", code, stderr, want)
	}
	_, stderr, code = run(t, "routes", "--http", "--check", saved, "--verb", "get")
	if code != 2 || !strings.Contains(stderr, "`--check` compares whole tables") {
		t.Errorf("--check with --verb: exit %d, stderr %q", code, stderr)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{saved, committed}, "error: " + saved + " is an HTTP route table and " + committed + " a route table: compare two tables of one kind\n"},
		{[]string{saved, "live", "--only", "keyPrefix"}, "error: unknown field \"keyPrefix\" in `--only`: valid fields are kubernetesVersion,emulatedVersion,featureGates,action,"},
	} {
		_, stderr, code := run(t, append([]string{"routes", "diff"}, tc.args...)...)
		if code != 2 || !strings.HasPrefix(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, stderr, tc.want)
		}
	}
}

func TestRoutesHTTPCompletion(t *testing.T) {
	t.Parallel()
	stdout, _, _ := run(t, "__complete", "routes", "--http", "--verb", "watch")
	got, directive := completions(t, stdout)
	if want := []string{"watch", "watchlist"}; !slices.Equal(got, want) || directive != ":6" {
		t.Errorf("--verb watch completes %q %s, want %q :6 (no file, no space)", got, directive, want)
	}
	stdout, _, _ = run(t, "__complete", "routes", "--http", "--resource", "pods,pods/st")
	got, _ = completions(t, stdout)
	if want := []string{"pods,pods/status"}; !slices.Equal(got, want) {
		t.Errorf("--resource pods,pods/st completes %q, want %q", got, want)
	}
}
