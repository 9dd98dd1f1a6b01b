package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/resource"
	kubectlapply "k8s.io/kubectl/pkg/cmd/apply"
	kubectldiff "k8s.io/kubectl/pkg/cmd/diff"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	utilexec "k8s.io/utils/exec"

	"github.com/regctl/regctl/internal/changes"
	"github.com/regctl/regctl/test/apiserver"
)

// diffed is what a diff wrote to its two directories, file by file, and
// its exit status; files are nil when no diff ran.
type diffed struct {
	live, merged map[string]string
	code         int
}

// readDir is the files of dir by name.
func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(data)
	}
	return out
}

// capturingExec runs the diff program as kubectl would, after reading
// the two directories it is given.
type capturingExec struct {
	utilexec.Interface
	t   *testing.T
	got *diffed
}

func (c capturingExec) Command(cmd string, args ...string) utilexec.Cmd {
	n := len(args)
	c.got.live, c.got.merged = readDir(c.t, args[n-2]), readDir(c.t, args[n-1])
	return c.Interface.Command(cmd, args...)
}

// kubectlDiff runs kubectl's own diff, in-process, on the manifest through
// the server, with its flags, and exits as kubectl diff exits.
func kubectlDiff(t *testing.T, k *kubectl, manifest string, flags ...string) diffed {
	t.Helper()
	f := kubectlFactory(k)
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut}
	cmd := kubectldiff.NewCmdDiff(f, streams)
	if err := cmd.ParseFlags(flags); err != nil {
		t.Fatal(err)
	}
	got := diffed{}
	o := kubectldiff.NewDiffOptions(streams)
	o.Diff.Exec = capturingExec{Interface: utilexec.New(), t: t, got: &got}
	o.FilenameOptions = resource.FilenameOptions{Filenames: []string{manifest}}
	if err := o.Complete(f, cmd, nil); err != nil {
		t.Fatal(err)
	}
	var exit utilexec.ExitError
	switch err := o.Run(); {
	case err == nil:
	case errors.As(err, &exit) && exit.ExitStatus() <= 1:
		got.code = exit.ExitStatus()
	default:
		got.code = 2 // cmdutil.CheckDiffErr
	}
	return got
}

// regctlDiff runs the regctl binary's diff with an external diff program
// that keeps the two directories.
func regctlDiff(t *testing.T, args ...string) diffed {
	t.Helper()
	keep := t.TempDir()
	script := filepath.Join(t.TempDir(), "keep-diff")
	body := "#!/bin/sh\ncp -r \"$1\" " + keep + "/live && cp -r \"$2\" " + keep + "/merged && exec diff -u -N \"$1\" \"$2\"\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(regctlBinary(t), append([]string{"diff"}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECTL_EXTERNAL_DIFF="+script)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	got := diffed{code: cmd.ProcessState.ExitCode()}
	if _, err := os.Stat(filepath.Join(keep, "live")); err == nil {
		got.live, got.merged = readDir(t, filepath.Join(keep, "live")), readDir(t, filepath.Join(keep, "merged"))
	}
	if got.code > 1 && stderr.Len() == 0 {
		t.Errorf("regctl diff %v exited %d and said nothing", args, got.code)
	}
	return got
}

// volatile are the fields a create sets anew each time.
var volatile = regexp.MustCompile(`(?m)^  (uid|creationTimestamp): .*$`)

// sameDiff compares two diffs' directories and exit statuses; the objects
// a diff would create differ only in their uid and creation time.
func sameDiff(t *testing.T, what string, regctl, kubectl diffed) {
	t.Helper()
	if regctl.code != kubectl.code {
		t.Errorf("%s: regctl diff exits %d, kubectl diff %d", what, regctl.code, kubectl.code)
	}
	for _, side := range []struct {
		name        string
		ours, their map[string]string
	}{{"LIVE", regctl.live, kubectl.live}, {"MERGED", regctl.merged, kubectl.merged}} {
		names := func(m map[string]string) []string {
			var out []string
			for k := range m {
				out = append(out, k)
			}
			slices.Sort(out)
			return out
		}
		if !slices.Equal(names(side.ours), names(side.their)) {
			t.Errorf("%s: %s holds %v for regctl, %v for kubectl", what, side.name, names(side.ours), names(side.their))
			continue
		}
		for name, ours := range side.ours {
			their := side.their[name]
			if regctl.live[name] == "" { // created: kubectl writes an empty LIVE file
				ours, their = volatile.ReplaceAllString(ours, "  $1: X"), volatile.ReplaceAllString(their, "  $1: X")
			}
			if ours != their {
				t.Errorf("%s: %s/%s differs\nregctl:\n%s\nkubectl:\n%s", what, side.name, name, ours, their)
			}
		}
	}
}

// kubectlFactory is kubectl's factory on k's kubeconfig.
func kubectlFactory(k *kubectl) cmdutil.Factory {
	config := genericclioptions.NewConfigFlags(true)
	config.KubeConfig = &k.kubeconfig
	config.CacheDir = &k.cache
	return cmdutil.NewFactory(cmdutil.NewMatchVersionFlags(config))
}

// kubectlApply runs kubectl's own apply, in-process, on the manifest
// through the server: a client-side apply, which records
// last-applied-configuration, unless flags say otherwise.
func kubectlApply(t *testing.T, k *kubectl, manifest string, flags ...string) {
	t.Helper()
	streams := genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
	applyFlags := kubectlapply.NewApplyFlags(streams)
	cmd := &cobra.Command{}
	applyFlags.AddFlags(cmd)
	if err := cmd.ParseFlags(append([]string{"-f", manifest}, flags...)); err != nil {
		t.Fatal(err)
	}
	o, err := applyFlags.ToOptions(kubectlFactory(k), cmd, "kubectl", nil)
	if err == nil {
		err = o.Validate()
	}
	if err == nil {
		err = o.Run()
	}
	if err != nil {
		t.Fatalf("kubectl apply -f %s: %v", manifest, err)
	}
}

// TestDiffAgreesWithKubectlDiff diffs manifests against objects a
// kube-apiserver holds, made as operators make them (kubectl apply, then
// kubectl label; a create and a replace; a server-side apply), with regctl
// on its etcd and with kubectl's own diff through the server, client-side
// and server-side: the same files in LIVE and MERGED, and the same exit.
func TestDiffAgreesWithKubectlDiff(t *testing.T) {
	t.Parallel()
	s := apiserver.Start(t)
	k := newKubectl(t, s)
	etcdFlag := "--etcd-servers=" + s.EtcdURL
	ctx := context.Background()
	createNamespace(t, s, "shop")

	const appConfig = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-config, namespace: shop}\ndata: {mode: live, level: info}\n"
	deployment := func(replicas int, image string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: " + strconv.Itoa(replicas) +
			"\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: web, image: \"" + image + "\"}]\n"
	}
	app := manifestFile(t, appConfig+"---\n"+deployment(1, "nginx:1.27"))
	kubectlApply(t, k, app)
	// kubectl label: a merge patch of the labels alone.
	if _, err := s.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("shop").Patch(ctx, "app-config", types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"tier":"cache"}}}`), metav1.PatchOptions{FieldManager: "kubectl-label"}); err != nil {
		t.Fatal(err)
	}
	// kubectl create, then kubectl replace.
	configMaps := s.Client.CoreV1().ConfigMaps("shop")
	replaced, err := configMaps.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "replaced"}, Data: map[string]string{"mode": "live"}}, metav1.CreateOptions{FieldManager: "kubectl-create"})
	if err != nil {
		t.Fatal(err)
	}
	replaced.Data["mode"] = "standby"
	if _, err := configMaps.Update(ctx, replaced, metav1.UpdateOptions{FieldManager: "kubectl-replace"}); err != nil {
		t.Fatal(err)
	}
	// kubectl apply --server-side.
	const ssa = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ssa, namespace: shop, labels: {app: web}}\ndata: {mode: live}\n"
	kubectlApply(t, k, manifestFile(t, ssa), "--server-side")

	// A custom resource, applied client-side: its patches are JSON merge
	// patches, merged by its CRD handler with its schema's defaults.
	apiserver.CreateWidgetsCRD(t, s)
	const widget = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: shop}\nspec: {size: large, color: blue}\n"
	kubectlApply(t, k, manifestFile(t, widget))

	const fresh = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: fresh, namespace: shop}\ndata: {mode: new}\n"
	for _, c := range []struct {
		name     string
		manifest string
		flags    []string
		code     int
	}{
		// Client-side, as kubectl apply merges.
		{"applied, unchanged since (but for a label): a built-in resource and a custom one", manifestFile(t, appConfig+"---\n"+deployment(1, "nginx:1.27")+"---\n"+widget), nil, 0},
		{"applied, changed (a key dropped, another changed, a new image and replicas, a custom resource's field dropped), a replaced object, and one to create",
			manifestFile(t, strings.Replace(appConfig, "mode: live, level: info", "mode: legacy", 1)+"---\n"+deployment(3, "nginx:1.28")+"---\n"+strings.Replace(widget, ", color: blue", "", 1)+
				"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: replaced, namespace: shop}\ndata: {mode: live, extra: \"1\"}\n"+fresh), nil, 1},
		{"an object in a namespace that does not exist", manifestFile(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lost, namespace: nowhere}\n"), nil, 2},
		{"an invalid object", manifestFile(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Not_A_Name, namespace: shop}\n"), nil, 2},
		// Server-side, as kubectl apply --server-side merges.
		{"server-side, unchanged", manifestFile(t, ssa), []string{"--server-side"}, 0},
		{"server-side, changed, over kubectl's client-side apply (which it takes over), and one to create",
			manifestFile(t, strings.Replace(ssa, "mode: live", "mode: legacy", 1)+"---\n"+deployment(3, "nginx:1.28")+fresh), []string{"--server-side"}, 1},
		{"server-side over fields a replace owns: conflicts", manifestFile(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: replaced, namespace: shop}\ndata: {mode: live}\n"), []string{"--server-side"}, 2},
		{"server-side, forcing the conflicts, a custom resource's too",
			manifestFile(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: replaced, namespace: shop}\ndata: {mode: live}\n---\n"+strings.Replace(widget, "large", "small", 1)), []string{"--server-side", "--force-conflicts"}, 1},
	} {
		ours, theirs := regctlDiff(t, append([]string{"-f", c.manifest, etcdFlag}, c.flags...)...), kubectlDiff(t, k, c.manifest, c.flags...)
		if ours.code != c.code {
			t.Errorf("%s: regctl diff exits %d, want %d", c.name, ours.code, c.code)
		}
		sameDiff(t, c.name, ours, theirs)
	}

	if _, stderr, code := run(t, "diff", etcdFlag); code != 2 || !strings.Contains(stderr, "`-f`") {
		t.Errorf("regctl diff without -f: exit %d, %q; want 2 and a line about -f", code, stderr)
	}
}

// changesReport runs regctl diff --from ... -o json and returns its
// report and exit code.
func changesReport(t *testing.T, args ...string) (*changes.Report, int) {
	t.Helper()
	stdout, stderr, code := run(t, append([]string{"diff", "-o", "json"}, args...)...)
	r := &changes.Report{}
	if err := json.Unmarshal([]byte(stdout), r); err != nil {
		t.Fatalf("diff %v: %v (exit %d): %s%s", args, err, code, stdout, stderr)
	}
	return r, code
}

// TestDiffBetweenTwoPointsInTime creates, updates (data, labels, status),
// deletes and recreates objects between two revisions, with named field
// managers, and compares the revisions on the live etcd and two snapshots
// taken at them: both report exactly those changes, with the managers
// that made them.
func TestDiffBetweenTwoPointsInTime(t *testing.T) {
	t.Parallel()
	e := newLiveEtcd(t)
	cm := func(name, data, labels string) string {
		return "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: shop, labels: {" + labels + "}}\ndata: {mode: " + data + "}\n"
	}
	deployment := "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: nginx}]}\n"
	mustRun(t, "create", "-f", manifestFile(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n"+cm("edited", "live", "")+cm("labelled", "live", "")+cm("gone", "live", "")+cm("again", "live", "")+cm("kept", "live", "")+deployment), e.flag())
	from := e.revision(t)
	fromSnapshot := saveSnapshot(t, e.client)

	replace := func(manager, manifest string, flags ...string) {
		mustRun(t, append([]string{"replace", "--force", "--field-manager", manager, "-f", manifestFile(t, manifest), e.flag()}, flags...)...)
	}
	replace("editor", cm("edited", "maintenance", ""))
	replace("labeller", cm("labelled", "live", "tier: cache"))
	mustRun(t, "delete", "configmaps/gone", "configmaps/again", "-n", "shop", e.flag())
	mustRun(t, "create", "-f", manifestFile(t, cm("again", "live", "")+cm("new", "live", "")), e.flag())
	status := deployment + "status: {replicas: 2, readyReplicas: 1}\n"
	replace("kube-controller-manager", status, "--subresource", "status")
	to := e.revision(t)
	toSnapshot := saveSnapshot(t, e.client)
	mustRun(t, "delete", "configmaps/kept", "-n", "shop", e.flag()) // after: not in the comparison

	type change struct{ name, change, fields string }
	want := []change{
		{"again", changes.Recreated, ""},
		{"edited", changes.Changed, "data.mode (editor)"},
		{"gone", changes.Removed, ""},
		{"labelled", changes.Changed, "metadata.labels (labeller)"},
		{"new", changes.Added, ""},
		{"web", changes.Changed, "status.readyReplicas (kube-controller-manager), status.replicas (kube-controller-manager)"},
	}
	check := func(what string, r *changes.Report, code int) {
		t.Helper()
		var got []change
		for _, o := range r.Objects {
			var fields []string
			for _, f := range o.Fields {
				fields = append(fields, f.Path+" ("+f.Manager+")")
			}
			got = append(got, change{o.Name, o.Change, strings.Join(fields, ", ")})
		}
		if code != 1 || !slices.Equal(got, want) {
			t.Errorf("%s: exit %d, changes\n%v\nwant\n%v", what, code, got, want)
		}
		if r.From.Revision != from || r.To.Revision != to {
			t.Errorf("%s: revisions %d to %d, want %d to %d", what, r.From.Revision, r.To.Revision, from, to)
		}
	}
	byRevision, code := changesReport(t, "--from", "rev:"+strconv.FormatInt(from, 10), "--to", "rev:"+strconv.FormatInt(to, 10), "-n", "shop", e.flag())
	check("two revisions", byRevision, code)
	bySnapshot, code := changesReport(t, "--from", fromSnapshot, "--to", toSnapshot, "-n", "shop")
	check("two snapshots", bySnapshot, code)
	if !reflect.DeepEqual(byRevision.Objects, bySnapshot.Objects) || !reflect.DeepEqual(byRevision.Resources, bySnapshot.Resources) {
		t.Errorf("the snapshots compare otherwise than their revisions:\n%+v\n%+v", bySnapshot, byRevision)
	}
	if same, code := changesReport(t, "--from", fromSnapshot, "--to", "rev:"+strconv.FormatInt(from, 10), e.flag()); code != 0 || len(same.Objects) != 0 {
		t.Errorf("a snapshot against its own revision: exit %d, %+v; want nothing", code, same.Objects)
	}
	if _, stderr, code := run(t, "diff", "--from", "rev:"+strconv.FormatInt(to+1000, 10), e.flag()); code != 2 || !strings.Contains(stderr, "is in the future") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("a future revision: exit %d, %q; want 2 and one line", code, stderr)
	}
	// A label selector selects on each side: the object labelled between
	// is new to the selection.
	selected, code := changesReport(t, "--from", "rev:"+strconv.FormatInt(from, 10), "--to", "rev:"+strconv.FormatInt(to, 10), "-n", "shop", "-l", "tier=cache", e.flag())
	if code != 1 || len(selected.Objects) != 1 || selected.Objects[0].Name != "labelled" || selected.Objects[0].Change != changes.Added {
		t.Errorf("-l tier=cache: exit %d, %+v; want labelled added to the selection", code, selected.Objects)
	}
	patch, _, code := run(t, "diff", "--from", "rev:"+strconv.FormatInt(from, 10), "--to", "rev:"+strconv.FormatInt(to, 10), "configmaps/edited", "-n", "shop", "--patch", e.flag())
	if code != 1 || !strings.Contains(patch, "-  mode: live\n+  mode: maintenance\n") || strings.Count(patch, "diff -u -N") != 1 {
		t.Errorf("--patch: exit %d:\n%s", code, patch)
	}
}

// TestDiffAcrossADeletedCRD deletes a CRD, and so its custom resources,
// through a kube-apiserver: a comparison with a revision from before reads
// that side through the CRDs it held then, and reports the custom
// resources removed with their resource stored on that side only.
func TestDiffAcrossADeletedCRD(t *testing.T) {
	t.Parallel()
	s := apiserver.Start(t)
	etcdFlag := "--etcd-servers=" + s.EtcdURL
	ctx := context.Background()
	apiserver.CreateCRD(t, s, gadgetsCRD)
	gadgets := s.Dynamic.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}).Namespace("default")
	for _, name := range []string{"a", "b"} {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": name}}}
		if _, err := gadgets.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	client := etcdClient(t, s.EtcdURL)
	e := &liveEtcd{url: s.EtcdURL, client: client}
	before := e.revision(t)
	crds, err := apiextensionsclient.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := crds.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, "gadgets.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := crds.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "gadgets.example.com", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("waiting for the CRD to go: %v", err)
	}
	r, code := changesReport(t, "--from", "rev:"+strconv.FormatInt(before, 10), "-A", etcdFlag)
	var gadgetsRes *changes.Resource
	for i := range r.Resources {
		if r.Resources[i].Resource == "gadgets.example.com" {
			gadgetsRes = &r.Resources[i]
		}
	}
	if code != 1 || gadgetsRes == nil || gadgetsRes.Removed != 2 || !strings.HasPrefix(gadgetsRes.Storage, "stored only on the from side") {
		t.Errorf("exit %d, gadgets %+v; want both gadgets removed, the resource stored on the from side only", code, gadgetsRes)
	}
}

// TestDiffOfAResourceOnAnotherEtcd keeps secrets on a second etcd
// (--etcd-servers-overrides): a revision names a point of the main etcd
// only, so between two revisions secrets are said not compared; between
// now and now, both etcds are read as they are.
func TestDiffOfAResourceOnAnotherEtcd(t *testing.T) {
	t.Parallel()
	main, other := newLiveEtcd(t), newLiveEtcd(t)
	flags := []string{main.flag(), "--etcd-servers-overrides=/secrets#" + other.url}
	before := main.revision(t)
	manifest := "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: shop}\nstringData: {password: hunter2}\n"
	mustRun(t, append([]string{"create", "--allow-plaintext", "-f", manifestFile(t, manifest)}, flags...)...)
	r, code := changesReport(t, append([]string{"--from", "rev:" + strconv.FormatInt(before, 10)}, flags...)...)
	var secrets, namespaces *changes.Resource
	for i := range r.Resources {
		switch r.Resources[i].Resource {
		case "secrets":
			secrets = &r.Resources[i]
		case "namespaces":
			namespaces = &r.Resources[i]
		}
	}
	if code != 1 || secrets == nil || secrets.Skipped == "" || secrets.Added != 0 || namespaces == nil || namespaces.Added != 1 {
		t.Errorf("exit %d, secrets %+v, namespaces %+v; want secrets not compared and the namespace added", code, secrets, namespaces)
	}
	now, code := changesReport(t, append([]string{"--from", "live"}, flags...)...)
	if code != 0 || len(now.Objects) != 0 {
		t.Errorf("live against live: exit %d, %+v; want nothing", code, now.Objects)
	}
	for _, res := range now.Resources {
		if res.Resource == "secrets" && (res.Skipped != "" || res.Unchanged != 1) {
			t.Errorf("live against live: secrets %+v; want the one secret compared, the same", res)
		}
	}
}
