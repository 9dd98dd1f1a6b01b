package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/completion"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
)

func TestCompletionScripts(t *testing.T) {
	t.Parallel()
	for shell, marker := range map[string]string{
		"bash":       "__start_regctl",
		"zsh":        "#compdef regctl",
		"fish":       "complete -c regctl",
		"powershell": "Register-ArgumentCompleter",
	} {
		t.Run(shell, func(t *testing.T) {
			stdout, stderr, code := run(t, "completion", shell)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if !strings.Contains(stdout, marker) {
				t.Errorf("the %s script does not contain %q", shell, marker)
			}
		})
	}
}

// completions parses the output of cobra's __complete: one candidate per
// line, then the directive as ":N".
func completions(t *testing.T, stdout string) ([]string, string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, ":") {
		t.Fatalf("no directive at the end of %q", stdout)
	}
	return lines[:len(lines)-1], last
}

const noFileComp = ":4" // cobra.ShellCompDirectiveNoFileComp

func TestCompleteCommandsAndFlags(t *testing.T) {
	t.Parallel()
	stdout, _, code := run(t, "__complete", "")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	got, _ := completions(t, stdout)
	for _, want := range []string{"completion", "routes", "version"} {
		if !slices.ContainsFunc(got, func(c string) bool { return strings.HasPrefix(c, want+"\t") }) {
			t.Errorf("commands %q lack %s", got, want)
		}
	}
	if slices.ContainsFunc(got, func(c string) bool { return strings.HasPrefix(c, "__") }) {
		t.Errorf("commands %q offer a hidden command", got)
	}

	stdout, _, _ = run(t, "__complete", "version", "-o", "")
	got, directive := completions(t, stdout)
	if want := []string{"text", "yaml", "json"}; !slices.Equal(got, want) || directive != noFileComp {
		t.Errorf("version -o completes %q %s, want %q %s", got, directive, want, noFileComp)
	}
	stdout, _, _ = run(t, "__complete", "get", "pods", "-o", "j")
	got, _ = completions(t, stdout)
	if want := []string{"json", "jsonpath", "jsonpath-as-json", "jsonpath-file"}; !slices.Equal(got, want) {
		t.Errorf("get -o j completes %q, want regctl's and kubectl's formats %q", got, want)
	}
}

// completeStandIn runs cobra's __complete on a stand-in command whose
// arguments complete with makeFunc. The stand-in has regctl's storage flags
// and a --namespace flag, as the commands taking resources have.
func completeStandIn(t *testing.T, makeFunc func(*cli.Globals) cobra.CompletionFunc, args ...string) (got []string, directive string) {
	t.Helper()
	var out, errOut bytes.Buffer
	g := &cli.Globals{IO: cli.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut}, Server: serverflags.NewOptions(), RequestTimeout: 5 * time.Second}
	root := &cobra.Command{Use: "regctl", SilenceErrors: true, SilenceUsage: true}
	g.Server.AddFlags(root.PersistentFlags())
	standIn := &cobra.Command{Use: "stand-in", ValidArgsFunction: makeFunc(g), Run: func(*cobra.Command, []string) {}}
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
	return completions(t, out.String())
}

func TestCompleteResourceObjects(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	etcd := "--etcd-servers=" + sb.etcdURL
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"no etcd, no names", []string{"configmaps", ""}, nil},
		{"resource first", []string{etcd, "se"}, []string{"secrets\tSecret", "serviceaccounts\tServiceAccount", "servicecidrs\tServiceCIDR", "services\tService"}},
		{"in a namespace", []string{etcd, "-n", "default", "configmaps", ""}, []string{"kube-root-ca.crt"}},
		{"short name", []string{etcd, "-n", "kube-system", "cm", "kube"}, []string{"kube-root-ca.crt"}},
		{"prefix", []string{etcd, "-n", "shop", "secrets", "x"}, nil},
		{"all namespaces, once", []string{etcd, "serviceaccounts", ""}, []string{"default"}},
		{"cluster-scoped ignores -n", []string{etcd, "-n", "shop", "namespaces", ""}, []string{"default", "kube-system", "shop"}},
		{"resource/name", []string{etcd, "-n", "shop", "pods/w"}, []string{"pods/web"}},
		// Names resolve as get resolves them: singular, kind, resource.version.group.
		{"singular", []string{etcd, "-n", "shop", "pod", ""}, []string{"batch-1", "web"}},
		{"kind", []string{etcd, "-n", "shop", "Pod", "w"}, []string{"web"}},
		{"fully specified", []string{etcd, "-n", "shop", "pods.v1.", "b"}, []string{"batch-1"}},
		// After a resource/name, more of them, as kubectl takes them.
		{"resource after resource/name", []string{etcd, "-n", "shop", "pods/web", "se"}, []string{"secrets\tSecret", "serviceaccounts\tServiceAccount", "servicecidrs\tServiceCIDR", "services\tService"}},
		{"resource/name after resource/name, not twice", []string{etcd, "-n", "shop", "pods/web", "pods/"}, []string{"pods/batch-1"}},
		{"other namespace", []string{etcd, "-n", "default", "pods/"}, nil},
		{"not twice", []string{etcd, "-n", "default", "configmaps", "kube-root-ca.crt", ""}, nil},
		{"unknown resource", []string{etcd, "widgets", ""}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, directive := completeStandIn(t, func(g *cli.Globals) cobra.CompletionFunc { return completion.ResourceObjects(g.CompletionFlags) }, tc.args...)
			if !slices.Equal(got, tc.want) || directive != noFileComp {
				t.Errorf("got %q %s, want %q %s", got, directive, tc.want, noFileComp)
			}
		})
	}
}

func TestCompleteNamespaces(t *testing.T) {
	t.Parallel()
	if got, _ := completeStandIn(t, func(g *cli.Globals) cobra.CompletionFunc { return completion.Namespaces(g.CompletionFlags) }, ""); len(got) != 0 {
		t.Errorf("without an etcd: got %q, want nothing", got)
	}
	sb := newSandbox(t)
	got, directive := completeStandIn(t, func(g *cli.Globals) cobra.CompletionFunc { return completion.Namespaces(g.CompletionFlags) }, "--etcd-servers="+sb.etcdURL, "s")
	if want := []string{"shop"}; !slices.Equal(got, want) || directive != noFileComp {
		t.Errorf("got %q %s, want %q %s", got, directive, want, noFileComp)
	}
}
