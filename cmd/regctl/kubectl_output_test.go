package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/kubectl/pkg/cmd/get"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubectl/pkg/scheme"

	"github.com/regctl/regctl/test/apiserver"
)

// TestGetPrintsWhatKubectlPrints creates pods and services through a real
// kube-apiserver, then prints them with regctl get (reading etcd through the
// stores) and with kubectl get (kubectl's own command, in-process, reading
// through the apiserver), and wants the same bytes on stdout.
//
// Tables have an AGE column, which both compute when they print. AGE is not
// masked: kubectl runs before and after regctl, and a comparison counts only
// when kubectl printed the same thing both times, so that no age ticked over
// while regctl ran; otherwise it is tried again.
func TestGetPrintsWhatKubectlPrints(t *testing.T) {
	t.Parallel()
	s := apiserver.Start(t)
	k := newKubectl(t, s)
	createOutputFixtures(t, s)
	jsonpathFile := writeFile(t, "names.jsonpath", `{range .items[*]}{.metadata.namespace}/{.metadata.name}{"\n"}{end}`)
	columnsFile := writeFile(t, "columns.txt", "NAME NODE APP\n.metadata.name .spec.nodeName .metadata.labels.app\n")

	for _, args := range [][]string{
		{"pods", "-A", "-o", "jsonpath={.items[*].metadata.name}"},
		{"pods/web-1", "-n", "shop", "-o", "jsonpath={.spec.nodeName}"},
		{"pods", "web-2", "web-1", "-n", "shop", "-o", "jsonpath={.items[*].metadata.name}"},
		{"pods", "-n", "shop", "-o", "jsonpath-file=" + jsonpathFile},
		{"pods", "-A", "-o", "custom-columns=NAME:.metadata.name,NODE:.spec.nodeName"},
		{"pods", "-A", "-o", "custom-columns-file=" + columnsFile, "--sort-by=.spec.nodeName"},
		{"pods", "-A", "-o", `go-template={{range .items}}{{.metadata.name}} {{.metadata.labels.app}}{{"\n"}}{{end}}`},
		{"pods", "-A", "--template={{len .items}}"},
		{"pods", "-A"},
		{"pods", "-n", "shop"},
		{"pods", "-A", "--sort-by=.metadata.name"},
		{"pods", "-A", "--sort-by=.metadata.creationTimestamp", "-o", "wide"},
		{"pods", "-A", "--sort-by=.metadata.creationTimestamp", "-o", "name"},
		{"pods", "-A", "--sort-by=.spec.nodeName", "-o", "yaml"},
		{"pods", "-n", "shop", "-L", "app"},
		{"pods", "-A", "-L", "tier,app"},
		{"pods", "-A", "--show-labels"},
		{"pods", "-A", "--no-headers"},
		{"pods", "web-2", "web-1", "-n", "shop", "--show-labels"},
		{"pods", "-n", "team-a", "--show-kind", "-o", "wide"},
		{"services", "-A"},
		{"services", "-n", "shop", "-o", "wide", "--sort-by=.metadata.name", "--no-headers"},
		// yaml and json, of one object and of lists, byte for byte.
		{"pods/web-1", "-n", "shop", "-o", "json"},
		{"pods/web-1", "-n", "shop", "-o", "yaml"},
		{"pods", "-n", "shop", "-o", "json"},
		{"pods", "-n", "shop", "-o", "yaml"},
		// Lists whose yaml folds long strings and has blank lines in
		// block scalars.
		{"priorityclasses", "-o", "yaml"},
		{"configmaps", "-n", "shop", "-o", "yaml"},
		{"services", "db", "-n", "shop", "-o", "json"},
		{"pods", "web-1", "db-0", "-n", "shop", "-o", "json"},
		// Several types at once: a table per type, names with their kind.
		{"pods,services", "-n", "shop"},
		{"svc,po", "-A", "-o", "wide"},
		{"pods,services", "-n", "shop", "--no-headers"},
		{"pods,services", "-n", "shop", "-o", "name"},
		{"pods,services", "-n", "shop", "-o", "jsonpath={.items[*].metadata.name}"},
		{"all", "-n", "shop"},
		{"services,pods", "db", "db-0", "-n", "shop", "--ignore-not-found"},
		{"pods,services", "web-1", "-n", "shop", "--ignore-not-found"},
	} {
		t.Run(caseName(args), func(t *testing.T) {
			agreeWithKubectl(t, k, s.EtcdURL, args...)
		})
	}
}

// caseName names a case by its arguments, files by their base name.
func caseName(args []string) string {
	words := make([]string, len(args))
	for i, arg := range args {
		if format, file, ok := strings.Cut(arg, "-file="); ok {
			arg = format + "-file=" + filepath.Base(file)
		}
		words[i] = arg
	}
	return strings.Join(words, " ")
}

// newKubectl is kubectl on the server s, with a cache of its own.
func newKubectl(t *testing.T, s *apiserver.Server) *kubectl {
	return &kubectl{kubeconfig: writeKubeconfig(t, s.Config), cache: t.TempDir()}
}

// agreeWithKubectl runs kubectl get, regctl get and kubectl get again with
// args, and wants regctl's stdout to be kubectl's, once kubectl printed the
// same both times.
func agreeWithKubectl(t *testing.T, k *kubectl, etcdURL string, args ...string) {
	t.Helper()
	agreeWithKubectlOn(t, k, "--etcd-servers="+etcdURL, args...)
}

// agreeWithKubectlOn is agreeWithKubectl with regctl reading source, a
// flag: the server's etcd, or a snapshot of it (--snapshot=FILE).
func agreeWithKubectlOn(t *testing.T, k *kubectl, source string, args ...string) {
	t.Helper()
	for attempt := 0; attempt < 10; attempt++ {
		if attempt > 0 {
			// Start just after an age ticks over, so that the three
			// commands can fit within one second.
			time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 10*time.Millisecond)))
		}
		before := k.get(t, args...)
		stdout, stderr, code := run(t, append(append([]string{"get"}, args...), source)...)
		after := k.get(t, args...)
		if code != 0 {
			t.Fatalf("regctl: exit %d: %s", code, stderr)
		}
		if before == "" {
			t.Fatal("kubectl printed nothing: the comparison would prove nothing")
		}
		// An age may tick over while regctl runs (on a loaded machine the
		// three commands take over a second): regctl printed what kubectl
		// printed either just before or just after it, or it tries again.
		if stdout == before || stdout == after {
			return
		}
		if before != after {
			continue
		}
		t.Errorf("regctl and kubectl differ\nregctl:\n%s\nkubectl:\n%s", stdout, before)
		return
	}
	t.Fatal("kubectl's output changed on every attempt")
}

// createOutputFixtures creates pods in two namespaces, in an order that is
// neither that of their names nor that of their keys, some a second apart,
// with and without a node and labels; and two services.
func createOutputFixtures(t *testing.T, s *apiserver.Server) {
	t.Helper()
	ctx := context.Background()
	for _, ns := range []string{"shop", "team-a"} {
		if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i, p := range []struct {
		ns, name, node string
		labels         map[string]string
	}{
		{"shop", "web-2", "node-b", map[string]string{"app": "web", "tier": "front"}},
		{"team-a", "api-1", "node-a", map[string]string{"app": "api"}},
		{"shop", "web-1", "node-a", map[string]string{"app": "web", "tier": "front"}},
		{"shop", "db-0", "", map[string]string{"app": "db", "tier": "back"}},
		{"team-a", "api-0", "node-c", map[string]string{"app": "api"}},
		{"team-a", "batch", "", map[string]string{"app": "batch"}},
	} {
		if i%2 == 1 {
			time.Sleep(1100 * time.Millisecond) // creation timestamps have whole seconds
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: p.name, Labels: p.labels},
			Spec:       corev1.PodSpec{NodeName: p.node, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}
		if _, err := s.Client.CoreV1().Pods(p.ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	notes := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "notes"}, Data: map[string]string{
		"blank":       "a\n\nb\n",
		"description": "A long line of words with spaces, longer than the eighty columns at which go-yaml folds.",
	}}
	if _, err := s.Client.CoreV1().ConfigMaps("shop").Create(ctx, notes, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, svc := range []*corev1.Service{
		{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "web"}},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "db"},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"}},
	} {
		if _, err := s.Client.CoreV1().Services("shop").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// kubectl runs kubectl's own get command in-process against a kubeconfig.
type kubectl struct {
	kubeconfig string
	cache      string
}

// get runs `kubectl get args...` and returns its stdout. Each run has flags
// of its own, as each kubectl process has.
func (k *kubectl) get(t *testing.T, args ...string) string {
	t.Helper()
	stdout, _ := k.getWithStderr(t, args...)
	return stdout
}

// getWithStderr is get, with what kubectl prints on stderr too: the
// warnings of the server's responses among it, printed by the warning
// writer kubectl's root command sets up (NewKubectlCommand), here on the
// run's own client config rather than client-go's process-wide default.
func (k *kubectl) getWithStderr(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig = &k.kubeconfig
	flags.CacheDir = &k.cache
	warnings := rest.NewWarningWriter(&errOut, rest.WarningWriterOptions{Deduplicate: true})
	flags.WrapConfigFn = func(c *rest.Config) *rest.Config {
		c.WarningHandler = warnings
		return c
	}
	cmd := get.NewCmdGet("kubectl", cmdutil.NewFactory(cmdutil.NewMatchVersionFlags(flags)),
		genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut})
	flags.AddFlags(cmd.PersistentFlags())
	cmd.SetArgs(args)
	// kubectl exits the process on an error; fail the test instead.
	cmdutil.BehaviorOnFatal(func(msg string, code int) { t.Fatalf("kubectl get %q: exit %d: %s", args, code, msg) })
	defer cmdutil.DefaultBehaviorOnFatal()
	if err := cmd.Execute(); err != nil {
		t.Fatalf("kubectl get %q: %v: %s", args, err, errOut.String())
	}
	return out.String(), errOut.String()
}

// writeKubeconfig writes a kubeconfig for what a client config holds.
func writeKubeconfig(t *testing.T, c *rest.Config) string {
	t.Helper()
	config := clientcmdapi.NewConfig()
	config.Clusters["test"] = &clientcmdapi.Cluster{
		Server:                   c.Host,
		CertificateAuthority:     c.CAFile,
		CertificateAuthorityData: c.CAData,
		InsecureSkipTLSVerify:    c.Insecure,
		TLSServerName:            c.ServerName,
	}
	config.AuthInfos["test"] = &clientcmdapi.AuthInfo{
		Token:                 c.BearerToken,
		ClientCertificate:     c.CertFile,
		ClientCertificateData: c.CertData,
		ClientKey:             c.KeyFile,
		ClientKeyData:         c.KeyData,
	}
	config.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test"}
	config.CurrentContext = "test"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*config, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNamesAreKubectls writes a config map (core group), a deployment
// (apps) and a custom resource with regctl into a real kube-apiserver's
// etcd. What regctl prints on stdout of each write is what kubectl's
// create and replace print: their name printer, as they configure it,
// given the object the server then serves; names with -o name are kubectl
// get's.
func TestNamesAreKubectls(t *testing.T) {
	t.Parallel()
	s := apiserver.Start(t)
	apiserver.CreateWidgetsCRD(t, s)
	k := newKubectl(t, s)
	etcdFlag := "--etcd-servers=" + s.EtcdURL
	ctx := context.Background()
	createNamespace(t, s, "shop")
	objects := []schema.GroupVersionResource{
		{Version: "v1", Resource: "configmaps"},
		{Group: "apps", Version: "v1", Resource: "deployments"},
		widgetsV1,
	}
	const manifest = `apiVersion: v1
kind: ConfigMap
metadata: {name: web, namespace: shop}
data: {k: v}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: busybox}]}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: web, namespace: shop}
spec: {size: large}
`
	// kubectl's report of a write: its printer as kubectl create and
	// replace configure it, of the objects as the server serves them.
	kubectlReport := func(operation string) string {
		t.Helper()
		printer, err := genericclioptions.NewPrintFlags(operation).WithTypeSetter(scheme.Scheme).ToPrinter()
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		for _, gvr := range objects {
			obj, err := s.Dynamic.Resource(gvr).Namespace("shop").Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := printer.PrintObj(obj, &out); err != nil {
				t.Fatal(err)
			}
		}
		return out.String()
	}

	stdout, stderr, code := run(t, "create", "-f", manifestFile(t, manifest), etcdFlag)
	if want := kubectlReport("created"); code != 0 || stdout != want {
		t.Errorf("create: exit %d, stdout %q, stderr %q; kubectl prints %q", code, stdout, stderr, want)
	}
	if !strings.Contains(stdout, "deployment.apps/web") || !strings.Contains(stdout, "widget.example.com/web") {
		t.Errorf("create: stdout %q: kubectl's printer names the groups, the comparison proves nothing", stdout)
	}
	var current []string
	for _, arg := range []string{"configmaps/web", "deployments/web", "widgets/web"} {
		current = append(current, mustRun(t, "get", arg, "-n", "shop", "-o", "yaml", etcdFlag))
	}
	stdout, stderr, code = run(t, "replace", "-f", manifestFile(t, strings.Join(current, "---\n")), etcdFlag)
	if want := kubectlReport("replaced"); code != 0 || stdout != want {
		t.Errorf("replace: exit %d, stdout %q, stderr %q; kubectl prints %q", code, stdout, stderr, want)
	}

	for _, args := range [][]string{
		{"deployments", "-n", "shop", "-o", "name"},
		{"deployments/web", "-n", "shop", "-o", "name"},
		{"widgets", "-n", "shop", "-o", "name"},
		{"configmaps,deployments,widgets", "web", "-n", "shop", "-o", "name"},
		{"all", "-n", "shop", "-o", "name"},
	} {
		t.Run(caseName(args), func(t *testing.T) { agreeWithKubectl(t, k, s.EtcdURL, args...) })
	}
}
