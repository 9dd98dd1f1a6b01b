package completion

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/rest"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/etcdview/embedded"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
	"github.com/regctl/regctl/internal/stores"
)

const noFileComp = ":4" // cobra.ShellCompDirectiveNoFileComp

// ephemeral are the flags of a command line that names no etcd: the map is
// built on an ephemeral one.
func ephemeral() Flags {
	return Flags{Config: storagemap.Config{Options: serverflags.NewOptions(), Timeout: 10 * time.Second}}
}

// complete runs cobra's __complete on a stand-in command whose arguments
// complete with fn. The stand-in has a --namespace flag, as the commands
// taking resources have.
func complete(t *testing.T, fn cobra.CompletionFunc, args ...string) (got []string, directive string) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := &cobra.Command{Use: "regctl", SilenceErrors: true, SilenceUsage: true}
	standIn := &cobra.Command{Use: "stand-in", ValidArgsFunction: fn, Run: func(*cobra.Command, []string) {}}
	standIn.Flags().StringP("namespace", "n", "", "")
	root.AddCommand(standIn)
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append([]string{"__complete", "stand-in"}, args...))
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(errOut.String(), "error:") {
		t.Errorf("completing %q: %s", args, errOut.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	directive = lines[len(lines)-1]
	if !strings.HasPrefix(directive, ":") {
		t.Fatalf("no directive at the end of %q", out.String())
	}
	return lines[:len(lines)-1], directive
}

// committedTable is the route table of a default server, as docs/routes
// keeps it.
func committedTable(t *testing.T) routetable.RouteTable {
	t.Helper()
	f, err := os.Open("../../docs/routes/" + serverflags.KubernetesVersion() + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tab, err := routetable.Load(f, f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func TestResourceCompletions(t *testing.T) {
	tab := committedTable(t)
	got := resourceCompletions(tab, "")
	// events is core's bare, as kubectl resolves it, and events.k8s.io's
	// qualified.
	for _, want := range []string{"pods\tPod", "po\tpods", "configmaps\tConfigMap", "cm\tconfigmaps", "namespaces\tNamespace",
		"deployments\tDeployment", "deploy\tdeployments", "events\tEvent", "events.events.k8s.io\tEvent", "hpa\thorizontalpodautoscalers"} {
		if !slices.Contains(got, want) {
			t.Errorf("completions lack %q: %q", want, got)
		}
	}
	if slices.ContainsFunc(got, func(c string) bool { return strings.Contains(c, "/") }) {
		t.Errorf("completions offer a subresource: %q", got)
	}
	if !slices.IsSorted(got) {
		t.Errorf("completions are not sorted: %q", got)
	}
	// Only what can be got: bindings are created, never read.
	if slices.ContainsFunc(got, func(c string) bool { return strings.HasPrefix(c, "bindings\t") }) {
		t.Errorf("completions offer bindings: %q", got)
	}
	want := []string{"secrets\tSecret", "serviceaccounts\tServiceAccount", "servicecidrs\tServiceCIDR", "services\tService"}
	if got := resourceCompletions(tab, "se"); !slices.Equal(got, want) {
		t.Errorf("completing %q: got %q, want %q", "se", got, want)
	}
}

// TestResources completes on the map the flags build, as a command does.
func TestResources(t *testing.T) {
	t.Parallel()
	got, directive := complete(t, Resources(ephemeral), "se")
	want := []string{"secrets\tSecret", "serviceaccounts\tServiceAccount", "servicecidrs\tServiceCIDR", "services\tService"}
	if !slices.Equal(got, want) || directive != noFileComp {
		t.Errorf("completing %q: got %q %s, want %q %s", "se", got, directive, want, noFileComp)
	}
	// A second argument is no resource: no map is built for it.
	noMap := func() Flags { t.Error("a map was built for a second argument"); return ephemeral() }
	if got, _ := complete(t, Resources(noMap), "pods", ""); len(got) != 0 {
		t.Errorf("completing a second argument: got %q, want nothing", got)
	}
}

func TestNamesNeedAnEtcd(t *testing.T) {
	t.Parallel()
	// A map built on this etcd would fail, and say so.
	noMap := func() Flags {
		opts := serverflags.NewOptions()
		opts.Server.Etcd.StorageConfig.Transport.ServerList = []string{"http://127.0.0.1:1"}
		return Flags{Config: storagemap.Config{Options: opts, Timeout: time.Second}}
	}
	if got, directive := complete(t, Namespaces(noMap), ""); len(got) != 0 || directive != noFileComp {
		t.Errorf("namespaces without an etcd: got %q %s, want nothing", got, directive)
	}
	if got, _ := complete(t, ResourceObjects(noMap), "configmaps", ""); len(got) != 0 {
		t.Errorf("names without an etcd: got %q, want nothing", got)
	}
}

func TestHTTPRoutesWithCommas(t *testing.T) {
	values := []string{"pods", "pods/log", "pods/status", "services"}
	for _, tc := range []struct {
		typed string
		want  []string
	}{
		{"", values},
		{"pods/", []string{"pods/log", "pods/status"}},
		{"services,pods/s", []string{"services,pods/status"}},
		// A value typed already is not offered again.
		{"pods,", []string{"pods,pods/log", "pods,pods/status", "pods,services"}},
		{"pods,pods/log,x", nil},
	} {
		if got := commaCompletions(values, tc.typed); !slices.Equal(got, tc.want) {
			t.Errorf("completing %q: got %q, want %q", tc.typed, got, tc.want)
		}
	}
}

func TestFormats(t *testing.T) {
	got, directive := Formats(render.Table, render.Wide, render.YAML, render.JSON)(&cobra.Command{}, nil, "")
	if want := []string{"table", "wide", "yaml", "json"}; !slices.Equal(got, want) || directive != cobra.ShellCompDirectiveNoFileComp {
		t.Errorf("got %q %d, want %q in the order given", got, directive, want)
	}
	if got, _ := Formats(render.YAML, render.JSON)(&cobra.Command{}, nil, "j"); !slices.Equal(got, []string{"json"}) {
		t.Errorf("completing j: got %q", got)
	}
}

// TestObjectNames lists names through the stores of a map on a real etcd,
// written through the server's own store.
func TestObjectNames(t *testing.T) {
	t.Parallel()
	e, err := embedded.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	opts := serverflags.NewOptions()
	opts.Server.Etcd.StorageConfig.Transport.ServerList = []string{e.ClientURL}
	flags := func() Flags {
		return Flags{Config: storagemap.Config{Options: opts, Timeout: 10 * time.Second}, EtcdGiven: true}
	}
	w, err := storagemap.Open(context.Background(), flags().Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	create := func(namespace, name string) {
		t.Helper()
		ctx := stores.RequestContext(context.Background(), handle.Target{Handle: w.Map.Handles["configmaps"], Namespace: namespace})
		cm := &api.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
		if _, err := w.Map.Handles["configmaps"].Storage.(rest.Creater).Create(ctx, cm, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("default", "web")
	create("default", "db")
	create("shop", "web")

	for _, tc := range []struct {
		resource, namespace string
		want                []string
	}{
		{"configmaps", "", []string{"db", "web"}}, // all namespaces, each name once
		{"configmaps", "shop", []string{"web"}},
		{"cm", "default", []string{"db", "web"}},
		{"configmap", "nowhere", nil},
		{"namespaces", "shop", nil}, // cluster-scoped: -n does not apply, and there are none
		{"widgets", "", nil},        // no such resource: nothing to offer
	} {
		got, err := objectNames(context.Background(), w.Map, tc.resource, tc.namespace, time.Second)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s in %q: got %q (%v), want %q", tc.resource, tc.namespace, got, err, tc.want)
		}
	}

	// As a command completes them, with its --namespace.
	got, directive := complete(t, ResourceObjects(flags), "-n", "default", "configmaps", "web", "")
	if want := []string{"db"}; !slices.Equal(got, want) || directive != noFileComp {
		t.Errorf("configmaps web: got %q %s, want %q %s", got, directive, want, noFileComp)
	}
	got, _ = complete(t, ResourceObjects(flags), "configmaps/w")
	if want := []string{"configmaps/web"}; !slices.Equal(got, want) {
		t.Errorf("configmaps/w: got %q, want %q", got, want)
	}
}

func TestRequireSubcommands(t *testing.T) {
	root := &cobra.Command{Use: "regctl", SilenceErrors: true, SilenceUsage: true}
	group := &cobra.Command{Use: "routes"}
	group.AddCommand(&cobra.Command{Use: "diff", Run: func(*cobra.Command, []string) {}}, &cobra.Command{Use: "check", Run: func(*cobra.Command, []string) {}})
	root.AddCommand(group, &cobra.Command{Use: "version", Run: func(*cobra.Command, []string) {}})
	RequireSubcommands(root)
	var out bytes.Buffer
	root.SetOut(&out)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"routes", "dif"}, `unknown command "dif" for "regctl routes": use one of check, diff`},
		{[]string{"completion", "tcsh"}, `unknown shell "tcsh" for "regctl completion": use one of bash, fish, powershell, zsh`},
	} {
		root.SetArgs(tc.args)
		if err := root.Execute(); err == nil || err.Error() != tc.want {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
	}
	root.SetArgs([]string{"routes"})
	if err := root.Execute(); err != nil || !strings.Contains(out.String(), "Available Commands:") {
		t.Errorf("routes alone: %v, want its help: %q", err, out.String())
	}
}
