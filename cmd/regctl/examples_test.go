package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/apis/coordination"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/utils/ptr"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/cli/rootcmd"
	"github.com/regctl/regctl/internal/clock"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/stores"
)

// unrunnableExamples are example lines that cannot run in the sandbox, each
// with the reason. Keep it empty: an example that does not run is one that
// may not work for a user either.
var unrunnableExamples = map[string]string{}

// TestExamples runs every command's examples, as written in its Example
// field, through the in-process CLI, and wants each to exit 0. Examples run
// in a sandbox:
//   - an embedded etcd seeded with sandboxObjects; `--etcd-servers=<its
//     URL>` is appended to every example that names no `--etcd-servers`, so
//     commands that read or write etcd have one, and those that would build
//     on an ephemeral etcd build the same map on the sandbox's;
//   - a working directory of its own per command, where `> file` writes and
//     later examples of the same command can read.
//
// Commands added later are covered without listing them here.
func TestExamples(t *testing.T) {
	sb := newSandbox(t)
	root, _ := rootcmd.New(cli.IOStreams{})
	root.InitDefaultCompletionCmd()
	for _, cmd := range commandTree(root) {
		if !cmd.IsAvailableCommand() || generatedByCobra(cmd) {
			continue
		}
		t.Run(strings.ReplaceAll(cmd.CommandPath(), " ", "_"), func(t *testing.T) {
			if cmd.Short == "" {
				t.Errorf("%q has no Short description", cmd.CommandPath())
			}
			examples, err := parseExamples(cmd.Example)
			if err != nil {
				t.Fatalf("%q: %v", cmd.CommandPath(), err)
			}
			if len(examples) == 0 && cmd.Runnable() {
				t.Fatalf("%q has no example: add an Example with at least one `regctl ...` line", cmd.CommandPath())
			}
			dir := t.TempDir()
			for name, content := range exampleFiles {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "backup.db"), sb.backup, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Chdir(dir)
			for _, ex := range examples {
				if reason, ok := unrunnableExamples[ex.line]; ok {
					t.Logf("skipping %q: %s", ex.line, reason)
					continue
				}
				runExample(t, sb, ex)
			}
		})
	}
}

// commandTree is root and all its descendants, parents first.
func commandTree(root *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{root}
	for _, c := range root.Commands() {
		out = append(out, commandTree(c)...)
	}
	return out
}

// generatedByCobra tells the commands cobra adds (help, completion and its
// shells), whose text is cobra's.
func generatedByCobra(cmd *cobra.Command) bool {
	for c := cmd; c.HasParent(); c = c.Parent() {
		if !c.Parent().HasParent() && (c.Name() == "completion" || c.Name() == "help") {
			return true
		}
	}
	return false
}

// example is one runnable line of an Example.
type example struct {
	line   string   // as written, continuation lines joined
	args   []string // the words after "regctl"
	stdout string   // file to write stdout to, from `> file`
	// code is the exit status the example is run for: 1 for a diff that
	// shows a difference, as its trailing comment says (# exits 1 ...).
	code int
}

var exitsOne = regexp.MustCompile(`\s#\s*exits 1\b`)

// parseExamples reads the `regctl ...` lines of an Example. Comment lines
// and lines for other programs are not run. A line may continue on the next
// with a trailing backslash, pipe its output into another program (which is
// not run) or redirect it to a file with `>`; other shell syntax is refused.
func parseExamples(text string) ([]example, error) {
	var out []example
	var pending string
	for _, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		if pending != "" {
			line, pending = pending+" "+line, ""
		}
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			pending = strings.TrimSpace(cont)
			continue
		}
		if line != "regctl" && !strings.HasPrefix(line, "regctl ") {
			continue
		}
		words, err := shellWords(line)
		if err != nil {
			return nil, err
		}
		ex := example{line: line}
		if exitsOne.MatchString(line) {
			ex.code = 1
		}
		for i := 1; i < len(words); i++ {
			w := words[i]
			switch {
			case w == "|":
				i = len(words)
			case w == ">" && i+1 < len(words) && ex.stdout == "":
				ex.stdout = words[i+1]
				i++
			case isShellOperator(w):
				return nil, fmt.Errorf("example %q: unsupported shell syntax %q", line, w)
			default:
				ex.args = append(ex.args, w)
			}
		}
		out = append(out, ex)
	}
	if pending != "" {
		return nil, errors.New("example ends with a line continuation")
	}
	return out, nil
}

// shellWords splits a line as a POSIX shell would, for the subset examples
// use: single and double quotes, backslash escapes, a comment from an
// unquoted # at the start of a word, and operators as words of their own.
// Unquoted $ and backticks are refused: examples must not depend on the
// reader's environment.
func shellWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !inWord:
			flush()
			return words, nil
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("example %q: unterminated quote", line)
			}
			cur.WriteString(line[i+1 : i+1+j])
			inWord, i = true, i+1+j
		case c == '"':
			j := i + 1
			for ; j < len(line) && line[j] != '"'; j++ {
				if line[j] == '\\' && j+1 < len(line) {
					j++
				}
				if line[j] == '$' || line[j] == '`' {
					return nil, fmt.Errorf("example %q: expands a variable or command", line)
				}
				cur.WriteByte(line[j])
			}
			if j == len(line) {
				return nil, fmt.Errorf("example %q: unterminated quote", line)
			}
			inWord, i = true, j
		case c == '\\' && i+1 < len(line):
			cur.WriteByte(line[i+1])
			inWord, i = true, i+1
		case c == '$' || c == '`':
			return nil, fmt.Errorf("example %q: expands a variable or command", line)
		case strings.IndexByte("|&;<>()", c) >= 0:
			flush()
			op := string(c)
			if i+1 < len(line) && strings.IndexByte("|&>", line[i+1]) >= 0 {
				op += string(line[i+1])
				i++
			}
			words = append(words, op)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return words, nil
}

func isShellOperator(w string) bool {
	return w != "" && strings.IndexByte("|&;<>()", w[0]) >= 0
}

func runExample(t *testing.T, sb *sandbox, ex example) {
	t.Helper()
	args := ex.args
	if !slices.ContainsFunc(args, func(a string) bool { return a == "--etcd-servers" || strings.HasPrefix(a, "--etcd-servers=") }) {
		flag := "--etcd-servers=" + sb.etcdURL
		if i := slices.Index(args, "--"); i >= 0 {
			args = slices.Insert(slices.Clone(args), i, flag)
		} else {
			args = append(slices.Clone(args), flag)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	code := Run(ctx, cli.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut}, args)
	if code != ex.code {
		t.Errorf("example %q exited %d (run as regctl %s):\n%s%s", ex.line, code, strings.Join(args, " "), errOut.String(), out.String())
		return
	}
	if ex.stdout != "" {
		if err := os.WriteFile(filepath.Clean(ex.stdout), out.Bytes(), 0o644); err != nil {
			t.Fatalf("example %q: writing its output: %v", ex.line, err)
		}
	}
}

// sandbox is an embedded etcd holding a few objects of a typical cluster,
// written through kube-apiserver's own stores.
type sandbox struct {
	etcdURL string
	// backup is a snapshot of the sandbox as seeded: backup.db in every
	// command's directory.
	backup []byte
}

// sandboxObjects are what the sandbox's etcd holds, by resource, in the
// order they are created (namespaces first: the others live in them).
// Examples may name them.
func sandboxObjects() []sandboxResource {
	meta := func(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	caData := map[string]string{"ca.crt": "-----BEGIN CERTIFICATE-----\n"}
	return []sandboxResource{
		{"namespaces", []runtime.Object{
			&api.Namespace{ObjectMeta: meta("", "default")},
			&api.Namespace{ObjectMeta: meta("", "kube-system")},
			&api.Namespace{ObjectMeta: meta("", "shop")},
		}},
		{"configmaps", []runtime.Object{
			&api.ConfigMap{ObjectMeta: meta("default", "kube-root-ca.crt"), Data: caData},
			&api.ConfigMap{ObjectMeta: meta("kube-system", "kube-root-ca.crt"), Data: caData},
			&api.ConfigMap{ObjectMeta: meta("shop", "kube-root-ca.crt"), Data: caData},
			&api.ConfigMap{ObjectMeta: meta("shop", "app-config"), Data: map[string]string{"mode": "live"}},
			&api.ConfigMap{ObjectMeta: meta("shop", "old-config"), Data: map[string]string{"mode": "legacy"}},
			&api.ConfigMap{ObjectMeta: meta("shop", "old-settings"), Data: map[string]string{"mode": "legacy"}},
		}},
		{"serviceaccounts", []runtime.Object{
			&api.ServiceAccount{ObjectMeta: meta("default", "default")},
			&api.ServiceAccount{ObjectMeta: meta("kube-system", "default")},
			&api.ServiceAccount{ObjectMeta: meta("shop", "default")},
		}},
		{"secrets", []runtime.Object{
			&api.Secret{ObjectMeta: meta("shop", "db-password"), Type: api.SecretTypeOpaque, Data: map[string][]byte{"password": []byte("s3cr3t")}},
			&api.Secret{ObjectMeta: meta("shop", "old-token"), Type: api.SecretTypeOpaque, Data: map[string][]byte{"token": []byte("0ld")}},
		}},
		{"pods", []runtime.Object{
			sandboxPod("web", nil),
			sandboxPod("batch-1", map[string]string{"app": "batch"}),
		}},
	}
}

// sandboxPod is a pod of the sandbox, bound to node-1.
func sandboxPod(name string, labels map[string]string) *api.Pod {
	return &api.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, Labels: labels}, Spec: api.PodSpec{
		NodeName: "node-1",
		Containers: []api.Container{{
			Name:                     "web",
			Image:                    "nginx:1.27",
			ImagePullPolicy:          api.PullIfNotPresent,
			TerminationMessagePolicy: api.TerminationMessageReadFile,
		}},
		RestartPolicy:                 api.RestartPolicyAlways,
		TerminationGracePeriodSeconds: ptr.To[int64](30),
		DNSPolicy:                     api.DNSClusterFirst,
		SecurityContext:               &api.PodSecurityContext{},
		SchedulerName:                 "default-scheduler",
	}}
}

// exampleFiles are the manifests examples name, as a user would have them
// at hand; each command's examples run in a directory holding them.
var exampleFiles = map[string]string{
	"encryption.yaml": `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
  - aescbc:
      keys:
      - {name: key1, secret: MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=}
  - identity: {}
`,
	"pods.yaml": `apiVersion: v1
kind: Pod
metadata: {name: api-0, namespace: shop}
spec:
  containers: [{name: api, image: "nginx:1.27"}]
---
apiVersion: v1
kind: Pod
metadata: {name: api-1, namespace: shop}
spec:
  containers: [{name: api, image: "nginx:1.27"}]
`,
	"pod.yaml": `apiVersion: v1
kind: Pod
metadata: {name: api-2, namespace: shop}
spec:
  containers: [{name: api, image: "nginx:1.27"}]
`,
}

type sandboxResource struct {
	resource string
	objects  []runtime.Object
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	e := newLiveEtcd(t)
	w := e.session(t)
	defer w.Close()
	for _, r := range sandboxObjects() {
		resource := r.resource
		creater, ok := w.Map.Handles[resource].Storage.(rest.Creater)
		if !ok {
			t.Fatalf("%s cannot be created", resource)
		}
		for _, obj := range r.objects {
			m, _ := obj.(metav1.ObjectMetaAccessor)
			ctx := stores.RequestContext(context.Background(), handle.Target{Handle: w.Map.Handles[resource], Namespace: m.GetObjectMeta().GetNamespace()})
			if _, err := creater.Create(ctx, obj, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
				t.Fatalf("seeding the sandbox with %s %s: %v", resource, m.GetObjectMeta().GetName(), err)
			}
		}
	}
	seedClocks(t, w)
	// A secret whose value no store can read, for delete's example of
	// removing one unread; no other example reads secrets in kube-system.
	if _, err := e.client.Put(context.Background(), "/registry/secrets/kube-system/legacy-token", "\x00\xffnot a stored object"); err != nil {
		t.Fatalf("seeding the sandbox with an unreadable secret: %v", err)
	}
	backup, err := os.ReadFile(saveSnapshot(t, e.client))
	if err != nil {
		t.Fatal(err)
	}
	return &sandbox{etcdURL: e.url, backup: backup}
}

// seedClocks gives the sandbox the clocks a time is told by, after its
// objects: a Lease created at 13:59:58 UTC on 2026-11-28 and renewed two
// hours ago, then a config map created in shop, then the Lease renewed a
// minute ago. Examples read shop at 2026-11-28T14:00:00Z, 90m or 1h,
// before the config map, and a diff from then finds it.
func seedClocks(t *testing.T, w *storagemap.Session) {
	t.Helper()
	leases := w.Map.Handles[clock.LeasesPath]
	ctx := stores.RequestContext(context.Background(), handle.Target{Handle: leases, Namespace: "kube-system"})
	holder := "kube-controller-manager"
	renewed := func(at time.Time) *coordination.Lease {
		return &coordination.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: holder},
			Spec: coordination.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: ptr.To[int32](15), RenewTime: &metav1.MicroTime{Time: at}}}
	}
	obj, err := leases.Storage.(rest.Creater).Create(ctx, renewed(time.Date(2026, 11, 28, 13, 59, 58, 0, time.UTC)), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("seeding the sandbox with a lease: %v", err)
	}
	renew := func(at time.Time) {
		t.Helper()
		l := renewed(at)
		l.ResourceVersion = obj.(*coordination.Lease).ResourceVersion
		if obj, _, err = leases.Storage.(rest.Updater).Update(ctx, holder, rest.DefaultUpdatedObjectInfo(l), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); err != nil {
			t.Fatalf("renewing the sandbox's lease: %v", err)
		}
	}
	renew(time.Now().Add(-2 * time.Hour))
	configMaps := w.Map.Handles["configmaps"]
	recent := &api.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "recent"}, Data: map[string]string{"mode": "new"}}
	if _, err := configMaps.Storage.(rest.Creater).Create(stores.RequestContext(context.Background(), handle.Target{Handle: configMaps, Namespace: "shop"}), recent, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatalf("seeding the sandbox with configmaps/recent: %v", err)
	}
	renew(time.Now().Add(-time.Minute))
}

func TestParseExamples(t *testing.T) {
	t.Parallel()
	got, err := parseExamples(`  # A comment, then a command
  regctl routes -o wide

  # Quotes, a continuation, a pipe and a redirect
  regctl routes --watch-cache-sizes='secrets#0' \
    -o "yaml" | grep keyPrefix
  regctl routes -o yaml > routes.yaml # keep it
  regctl diff --from rev:2   # exits 1 when anything changed
  source <(regctl completion bash)`)
	if err != nil {
		t.Fatal(err)
	}
	want := []example{
		{line: "regctl routes -o wide", args: []string{"routes", "-o", "wide"}},
		{line: `regctl routes --watch-cache-sizes='secrets#0' -o "yaml" | grep keyPrefix`, args: []string{"routes", "--watch-cache-sizes=secrets#0", "-o", "yaml"}},
		{line: "regctl routes -o yaml > routes.yaml # keep it", args: []string{"routes", "-o", "yaml"}, stdout: "routes.yaml"},
		{line: "regctl diff --from rev:2   # exits 1 when anything changed", args: []string{"diff", "--from", "rev:2"}, code: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}

	for _, bad := range []string{"regctl get pods $NAME", "regctl get pods; regctl keys pods", "regctl get 'pods"} {
		if _, err := parseExamples(bad); err == nil {
			t.Errorf("parseExamples(%q): want an error", bad)
		}
	}
}
