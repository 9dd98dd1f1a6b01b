package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/regctl/regctl/internal/etcdview/embedded"
	"github.com/regctl/regctl/internal/logs"
)

// crdSources holds real projects' CRDs, one directory per project, each
// with a SOURCE.md naming where they come from.
const crdSources = "bench/testdata/crds"

// customResources is how many custom resources the CRD sandbox gets,
// spread over four kinds of the real set.
const customResources = 100

// crds measures regctl on sandboxes (--data-dir) holding the same pods:
// one with nothing else; one with the CRDs of four kinds of the real set
// (bench/testdata/crds) and a hundred custom resources of them; and two
// with those and more CRDs made from the real set (the real set once as it
// is, then copies of it under renamed groups), a hundred and count. It
// reports the one-shot create of the CRDs, then each command with
// --etcd-servers on an etcd this process serves each sandbox with, which
// are regctl's own figures as on a cluster, and then with --data-dir,
// where they include the sandbox's etcd starting in regctl's process. Each
// target of a command that pays for what it touches is told met or missed.
func crds(dir, launcher, regctl string, n, pods, count int) error {
	logs.Setup(0, io.Discard)
	ctx := context.Background()
	real, err := loadCRDs(crdSources)
	if err != nil {
		return err
	}
	if count < len(real) {
		return fmt.Errorf("-crds %d: want at least the %d CRDs of %s, which the custom resources need", count, len(real), crdSources)
	}
	progress("building etcdctl")
	etcdctl, err := buildEtcdctl(dir)
	if err != nil {
		return err
	}
	sb := crdSandboxes{plain: filepath.Join(dir, "sandbox-pods"), few: filepath.Join(dir, "sandbox-4crds"),
		hundred: filepath.Join(dir, "sandbox-100crds"), many: filepath.Join(dir, "sandbox-crds")}
	progress(fmt.Sprintf("writing %d pods into a sandbox", pods))
	start := time.Now()
	if err := seedSandbox(ctx, sb.plain, pods); err != nil {
		return err
	}
	// The others start as copies of the first, so all hold the very same
	// pods.
	for _, d := range []string{sb.few, sb.hundred, sb.many} {
		if out, err := exec.Command("cp", "-a", sb.plain, d).CombinedOutput(); err != nil {
			return fmt.Errorf("copying the sandbox: %w: %s", err, out)
		}
	}
	progress(fmt.Sprintf("pods written in %s", time.Since(start).Round(time.Second)))

	manifest := filepath.Join(dir, "crds.yaml")
	size, err := writeCRDs(manifest, real, count)
	if err != nil {
		return err
	}
	fmt.Printf("%d CRDs from %d real ones (%s), %.1f MiB of manifest\n", count, len(real), crdProjects(real), float64(size)/(1<<20))
	crs := filepath.Join(dir, "crs.yaml")
	if err := writeCustomResources(crs); err != nil {
		return err
	}
	fewCRDs, hundredCRDs := filepath.Join(dir, "crds-4.yaml"), filepath.Join(dir, "crds-100.yaml")
	if err := writeRealCRDs(fewCRDs, real, customResourceCRDs...); err != nil {
		return err
	}
	if _, err := writeCRDs(hundredCRDs, real, 100); err != nil {
		return err
	}

	// The creates, once each: each run would need a fresh sandbox of pods,
	// and they are the figures of a setup, not of a command.
	progress(fmt.Sprintf("creating %d CRDs with regctl create -f", count))
	created, err := createOnce(launcher, regctl, manifest, sb.many, count, "customresourcedefinition")
	if err != nil {
		return err
	}
	createdCRs, err := createOnce(launcher, regctl, crs, sb.many, customResources, "")
	if err != nil {
		return err
	}
	for _, d := range []struct {
		dir, crds string
		count     int
	}{{sb.few, fewCRDs, len(customResourceCRDs)}, {sb.hundred, hundredCRDs, 100}} {
		progress(fmt.Sprintf("creating %d CRDs and the custom resources in %s", d.count, filepath.Base(d.dir)))
		if _, err := createOnce(launcher, regctl, d.crds, d.dir, d.count, "customresourcedefinition"); err != nil {
			return err
		}
		if _, err := createOnce(launcher, regctl, crs, d.dir, customResources, ""); err != nil {
			return err
		}
	}

	for _, s := range []struct{ name, dir string }{{"without CRDs", sb.plain}, {"with 4 CRDs", sb.few}, {"with 100 CRDs", sb.hundred}, {fmt.Sprintf("with %d CRDs", count), sb.many}} {
		if err := describeSandbox(ctx, s.name, s.dir); err != nil {
			return err
		}
	}
	fmt.Println()
	fmt.Println("one-shot, on the sandbox of pods:")
	t := newTable(launcher, 70, false)
	t.row(fmt.Sprintf("regctl create -f (%d CRDs)", count), stats{median: created.wall, min: created.wall, max: created.wall, peakRSS: created.maxRSS}, "")
	t.row(fmt.Sprintf("regctl create -f (%d custom resources)", customResources), stats{median: createdCRs.wall, min: createdCRs.wall, max: createdCRs.wall, peakRSS: createdCRs.maxRSS}, "")
	targets := []func(){func() {
		verdict(fmt.Sprintf("create -f of %d CRDs: %.1f s", count, created.wall.Seconds()), "<= 15 s", created.wall <= 15*time.Second)
		verdict(fmt.Sprintf("create -f of %d CRDs: %.0f MiB", count, float64(created.maxRSS)/1024), "<= 400 MiB", created.maxRSS <= 400*1024)
	}}

	live, err := serveSandboxes(sb)
	if err != nil {
		return err
	}
	defer live.close()
	fmt.Println()
	fmt.Printf("each command with --etcd-servers, on an etcd serving each sandbox (%d pods; CRDs and %d custom resources more):\n", pods, customResources)
	more, figures, err := measureCRDCommands(launcher, regctl, etcdctl, n, pods, count, live.flags())
	if err != nil {
		return err
	}
	targets = append(targets, more...)
	live.close()

	fmt.Println()
	fmt.Println("the same with --data-dir: the sandbox's etcd starts in regctl's process, and its start reads the whole database")
	if _, _, err := measureCRDCommands(launcher, regctl, "", n, pods, count, sb.flags()); err != nil {
		return err
	}
	fmt.Println()
	fmt.Printf("kubectl's reads of the custom resources through a kube-apiserver serving the sandbox of %d CRDs, after a warm-up read:\n", count)
	vsKubectl, err := measureKubectlCRs(dir, launcher, n, sb.many, figures)
	if err != nil {
		fmt.Printf("kubectl skipped: %s\n", oneLine(err))
	}
	targets = append(targets, vsKubectl...)
	fmt.Println()
	fmt.Println("targets (on the figures with --etcd-servers):")
	for _, t := range targets {
		t()
	}
	return nil
}

// measureKubectlCRs measures kubectl's reads of the custom resources
// through a kube-apiserver on an etcd serving the sandbox dir, last, as the
// server writes to the etcd it serves; regctl's figures for the same reads
// are set against them.
func measureKubectlCRs(dir, launcher string, n int, sandbox string, regctl map[string]stats) ([]func(), error) {
	kubectl, apiserverTest, err := buildKubectlServer(dir)
	if err != nil {
		return nil, err
	}
	e, err := embedded.StartOn(sandbox, 0, nil, true)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	progress("starting kube-apiserver")
	kubeconfig := filepath.Join(dir, "kubeconfig-crds")
	stop, err := startAPIServer(apiserverTest, e.ClientURL, kubeconfig)
	if err != nil {
		return nil, err
	}
	defer stop()
	// HOME is where kubectl keeps its discovery cache: a fresh one,
	// filled by the warm-up run.
	env := []string{"KUBECONFIG=" + kubeconfig, "HOME=" + filepath.Join(dir, "kubectl-home-crds")}
	t := newTable(launcher, 70, true)
	t.header = "regctl"
	var targets []func()
	for _, b := range []struct {
		name   string
		args   []string
		verify func([]byte) error
	}{
		{"get issuers.cert-manager.io -A", []string{"get", "issuers.cert-manager.io", "-A", "-o", "name"}, occurs("issuer.cert-manager.io/", customResources/4)},
		{"get issuers.cert-manager.io NAME -o yaml", []string{"get", "issuers.cert-manager.io", "issuer-00", "-n", benchNamespaces[0], "-o", "yaml"}, contains("kind: Issuer", "name: issuer-00")},
	} {
		ours := regctl[b.name]
		st, err := t.add(command{name: "kubectl " + b.name, bin: kubectl, args: b.args, env: env, verify: b.verify}, n, func(st stats) string {
			return fmt.Sprintf("%.0f ms (%.2fx)", float64(ours.median.Microseconds())/1000, ratio(ours, st))
		})
		if err != nil {
			return nil, err
		}
		name := b.name
		targets = append(targets, func() {
			verdict(fmt.Sprintf("%s: regctl %.0f ms, kubectl %.0f ms", name, float64(ours.median.Microseconds())/1000, float64(st.median.Microseconds())/1000), "<= kubectl", ours.median <= st.median)
		})
	}
	return targets, nil
}

// customResourceCRDs are the CRDs of the custom resources the sandboxes
// hold (writeCustomResources).
var customResourceCRDs = []string{"issuers.cert-manager.io", "certificates.cert-manager.io", "gatewayclasses.gateway.networking.k8s.io", "httproutes.gateway.networking.k8s.io"}

// crdSandboxes are the sandboxes of the crds benchmark, as directories.
type crdSandboxes struct{ plain, few, hundred, many string }

// crdFlags are the flags that point regctl at each sandbox.
type crdFlags struct{ plain, few, hundred, many []string }

func (s crdSandboxes) flags() crdFlags {
	return crdFlags{[]string{"--data-dir", s.plain}, []string{"--data-dir", s.few}, []string{"--data-dir", s.hundred}, []string{"--data-dir", s.many}}
}

// servedSandboxes are the sandboxes, each served by an etcd of this process.
type servedSandboxes struct {
	etcds []*embedded.Etcd
	urls  []string
}

func serveSandboxes(sb crdSandboxes) (*servedSandboxes, error) {
	out := &servedSandboxes{}
	for _, d := range []string{sb.plain, sb.few, sb.hundred, sb.many} {
		e, err := embedded.StartOn(d, 0, nil, true)
		if err != nil {
			out.close()
			return nil, err
		}
		out.etcds = append(out.etcds, e)
		out.urls = append(out.urls, e.ClientURL)
	}
	return out, nil
}

func (s *servedSandboxes) flags() crdFlags {
	f := func(i int) []string { return []string{"--etcd-servers", s.urls[i]} }
	return crdFlags{f(0), f(1), f(2), f(3)}
}

func (s *servedSandboxes) close() {
	for _, e := range s.etcds {
		e.Close()
	}
	s.etcds = nil
}

// measureCRDCommands measures each command on the sandboxes flags point
// at, side by side, and returns the verdicts of the targets. With etcdctl
// it also measures etcdctl's raw read of every key, scan's anchor.
func measureCRDCommands(launcher, regctl, etcdctl string, n, pods, count int, flags crdFlags) ([]func(), map[string]stats, error) {
	t := newTable(launcher, 70, true)
	t.header = "vs anchor"
	run := func(name string, flags []string, args []string, verify func([]byte) error, anchor *stats) (stats, error) {
		return t.add(command{name: name, bin: regctl, args: append(append([]string(nil), args...), flags...), verify: verify}, n, func(st stats) string {
			if anchor == nil {
				return "anchor"
			}
			return fmt.Sprintf("%.2fx, %+.0f MiB", ratio(st, *anchor), st.mib()-anchor.mib())
		})
	}
	var targets []func()
	many := map[string]stats{}
	pod, _ := benchPod(0)
	manyLabel := fmt.Sprintf("%d CRDs", count)
	type target func(name string, st, anchor stats) func()
	// Built-in resources: within 1.1x and 10 MiB of the sandbox without
	// CRDs.
	builtIn := func(name string, st, anchor stats) func() {
		return func() {
			verdict(fmt.Sprintf("%s: %.2fx, %+.0f MiB", name, ratio(st, anchor), st.mib()-anchor.mib()), "1.1x, +10", ratio(st, anchor) <= 1.1 && st.mib()-anchor.mib() <= 10)
		}
	}
	// One custom resource type: within 1.2x of the sandbox of its CRDs
	// only.
	oneType := func(name string, st, anchor stats) func() {
		return func() { verdict(fmt.Sprintf("%s: %.2fx", name, ratio(st, anchor)), "1.2x", ratio(st, anchor) <= 1.2) }
	}
	// The whole map: at most 1 s and 200 MiB.
	wholeMap := func(name string, st, _ stats) func() {
		return func() {
			verdict(fmt.Sprintf("%s at %d CRDs: %.2f s, %.0f MiB", name, count, st.median.Seconds(), st.mib()), "1 s, 200", st.median <= time.Second && st.mib() <= 200)
		}
	}
	issuers := occurs("issuer.cert-manager.io/", customResources/4)
	for _, b := range []struct {
		name        string
		args        []string
		verify      func([]byte) error
		anchorLabel string
		anchorFlags []string
		target      target
	}{
		{"get namespaces", []string{"get", "namespaces"}, contains(benchNamespaces...), "no CRDs", flags.plain, builtIn},
		{"get pods -A -o name", []string{"get", "pods", "-A", "-o", "name"}, occurs("pod/", pods), "no CRDs", flags.plain, builtIn},
		{"get pods NAME -o yaml", []string{"get", "pods", pod.Name, "-n", pod.Namespace, "-o", "yaml"}, contains("name: " + pod.Name), "no CRDs", flags.plain, builtIn},
		{"keys pods -A", []string{"keys", "pods", "-A"}, occurs("/registry/pods/", pods), "no CRDs", flags.plain, builtIn},
		{"get issuers.cert-manager.io -A", []string{"get", "issuers.cert-manager.io", "-A", "-o", "name"}, issuers, "4 CRDs", flags.few, oneType},
		{"get issuers.cert-manager.io NAME -o yaml", []string{"get", "issuers.cert-manager.io", "issuer-00", "-n", benchNamespaces[0], "-o", "yaml"}, contains("kind: Issuer", "name: issuer-00"), "4 CRDs", flags.few, oneType},
		{"get issuers -A (a name without its group)", []string{"get", "issuers", "-A", "-o", "name"}, issuers, "4 CRDs", flags.few, oneType},
		{"routes", []string{"routes"}, contains("pods"), "no CRDs", flags.plain, wholeMap},
		{"keys", []string{"keys"}, contains("pods"), "no CRDs", flags.plain, wholeMap},
	} {
		anchor, err := run(fmt.Sprintf("regctl %s (%s)", b.name, b.anchorLabel), b.anchorFlags, b.args, b.verify, nil)
		if err != nil {
			return nil, nil, err
		}
		st, err := run(fmt.Sprintf("regctl %s (%s)", b.name, manyLabel), flags.many, b.args, b.verify, &anchor)
		if err != nil {
			return nil, nil, err
		}
		targets = append(targets, b.target(b.name, st, anchor))
		many[b.name] = st
	}
	// scan: within 1.5x of etcdctl's raw read, 250 MiB, flat in the CRDs.
	var raw *stats
	if etcdctl != "" {
		endpoints := flags.many[1]
		st, err := t.add(command{name: fmt.Sprintf("etcdctl get /registry/ --prefix (%s)", manyLabel), bin: etcdctl,
			args: []string{"--endpoints", endpoints, "get", "/registry/", "--prefix"}}, n, func(stats) string { return "anchor" })
		if err != nil {
			return nil, nil, err
		}
		raw = &st
	}
	hundred, err := run("regctl scan (100 CRDs)", flags.hundred, []string{"scan"}, contains("pods"), raw)
	if err != nil {
		return nil, nil, err
	}
	st, err := run(fmt.Sprintf("regctl scan (%s)", manyLabel), flags.many, []string{"scan"}, contains("pods"), raw)
	if err != nil {
		return nil, nil, err
	}
	if raw != nil {
		targets = append(targets, func() {
			verdict(fmt.Sprintf("scan at %d CRDs: %.2fx etcdctl", count, ratio(st, *raw)), "1.5x", ratio(st, *raw) <= 1.5)
		})
	}
	targets = append(targets, func() {
		verdict(fmt.Sprintf("scan at %d CRDs: %.0f MiB; at 100: %.0f MiB", count, st.mib(), hundred.mib()), "250, flat", st.mib() <= 250 && st.mib() <= hundred.mib()*1.1)
	})
	return targets, many, nil
}

// createOnce runs regctl create -f manifest in the sandbox dir once, and
// checks it printed want lines (of kind, when set).
func createOnce(launcher, regctl, manifest, dir string, want int, kind string) (runResult, error) {
	r, err := runOnce(launcher, command{
		name: "regctl create -f " + filepath.Base(manifest), bin: regctl,
		args: []string{"create", "-f", manifest, "--data-dir", dir, "-o", "name"},
	}, true)
	if err != nil {
		return r, err
	}
	got := strings.Count(strings.TrimSpace(string(r.stdout)), "\n") + 1
	if kind != "" {
		got = strings.Count(string(r.stdout), kind)
	}
	if got != want {
		return r, fmt.Errorf("regctl create -f %s printed %d objects, want %d", filepath.Base(manifest), got, want)
	}
	return r, nil
}

// seedSandbox writes pods into a new sandbox on dir.
func seedSandbox(ctx context.Context, dir string, pods int) error {
	e, err := embedded.StartOn(dir, 0, nil, true)
	if err != nil {
		return err
	}
	if err := seedPods(ctx, e.ClientURL, pods); err != nil {
		e.Close()
		return err
	}
	return e.Close()
}

// realCRD is one CRD of crdSources, decoded.
type realCRD struct {
	project string
	obj     map[string]any
}

// loadCRDs reads every YAML file under each project directory of root, one
// CRD a file, in the order of their paths.
func loadCRDs(root string) ([]realCRD, error) {
	files, err := filepath.Glob(filepath.Join(root, "*", "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no CRDs under %s: run the bench from the repository's root", root)
	}
	sort.Strings(files)
	var out []realCRD
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var obj map[string]any
		if err := yaml.Unmarshal(data, &obj); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if obj["apiVersion"] != "apiextensions.k8s.io/v1" || obj["kind"] != "CustomResourceDefinition" {
			return nil, fmt.Errorf("%s: not an apiextensions.k8s.io/v1 CustomResourceDefinition", f)
		}
		out = append(out, realCRD{project: filepath.Base(filepath.Dir(f)), obj: obj})
	}
	return out, nil
}

func crdProjects(real []realCRD) string {
	counts := map[string]int{}
	var names []string
	for _, c := range real {
		if counts[c.project] == 0 {
			names = append(names, c.project)
		}
		counts[c.project]++
	}
	var parts []string
	for _, p := range names {
		parts = append(parts, fmt.Sprintf("%s %d", p, counts[p]))
	}
	return strings.Join(parts, ", ")
}

// writeCRDs writes count CRDs into one manifest: the real set as it is,
// then copies of it whose groups are renamed, GROUP.rR.bench.example for
// copy R, with metadata.name PLURAL.GROUP to match. Kinds and plurals stay:
// they may repeat across groups. It returns the manifest's size.
func writeCRDs(path string, real []realCRD, count int) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := range count {
		copyN, crd := i/len(real), real[i%len(real)].obj
		spec := crd["spec"].(map[string]any)
		meta := crd["metadata"].(map[string]any)
		group, name := spec["group"].(string), meta["name"]
		if copyN > 0 {
			// The real CRD is renamed for this copy, and back below.
			renamed := fmt.Sprintf("%s.r%d.bench.example", group, copyN)
			plural := spec["names"].(map[string]any)["plural"].(string)
			spec["group"], meta["name"] = renamed, plural+"."+renamed
		}
		data, err := json.Marshal(crd)
		if err != nil {
			f.Close()
			return 0, err
		}
		// JSON documents are YAML ones: a stream of them is a YAML stream.
		w.WriteString("---\n")
		w.Write(data)
		w.WriteString("\n")
		spec["group"], meta["name"] = group, name
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return 0, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return 0, err
	}
	return info.Size(), f.Close()
}

// writeRealCRDs writes the CRDs of real named names into one manifest.
func writeRealCRDs(path string, real []realCRD, names ...string) error {
	var b strings.Builder
	for _, name := range names {
		i := slices.IndexFunc(real, func(c realCRD) bool { return c.obj["metadata"].(map[string]any)["name"] == name })
		if i < 0 {
			return fmt.Errorf("no CRD %s in %s", name, crdSources)
		}
		data, err := json.Marshal(real[i].obj)
		if err != nil {
			return err
		}
		b.WriteString("---\n" + string(data) + "\n")
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// writeCustomResources writes customResources custom resources of four
// kinds of the real set, in their real groups: cert-manager Issuers and
// Certificates, Gateway API GatewayClasses and HTTPRoutes, the namespaced
// ones spread over benchNamespaces.
func writeCustomResources(path string) error {
	var b strings.Builder
	for i := range customResources / 4 {
		ns := benchNamespaces[i%len(benchNamespaces)]
		fmt.Fprintf(&b, `---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: issuer-%02d, namespace: %s}
spec:
  selfSigned: {}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: cert-%02d, namespace: %s}
spec:
  secretName: cert-%02d-tls
  dnsNames: [app-%02d.%s.example.com]
  issuerRef: {name: issuer-%02d, kind: Issuer}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: class-%02d}
spec:
  controllerName: example.com/gateway-controller-%02d
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: route-%02d, namespace: %s}
spec:
  parentRefs: [{name: gateway}]
  hostnames: [app-%02d.%s.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /api}}]
    backendRefs: [{name: svc-%02d, port: 8080}]
`, i, ns, i, ns, i, i, ns, i, i, i, i, ns, i, ns, i)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// describeSandbox prints the keys and bytes a sandbox holds, all of them
// and the CRDs'.
func describeSandbox(ctx context.Context, name, dir string) error {
	e, err := embedded.StartOn(dir, 0, nil, true)
	if err != nil {
		return err
	}
	defer e.Close()
	keys, size, err := storedSize(ctx, e.ClientURL, "/registry/")
	if err != nil {
		return err
	}
	crdKeys, crdSize, err := storedSize(ctx, e.ClientURL, "/registry/apiextensions.k8s.io/customresourcedefinitions/")
	if err != nil {
		return err
	}
	fmt.Printf("sandbox %s: %d keys under /registry/, %.1f MiB of values; CRDs: %d keys, %.1f MiB\n",
		name, keys, float64(size)/(1<<20), crdKeys, float64(crdSize)/(1<<20))
	return nil
}

// contains checks that the output holds every one of ss.
func contains(ss ...string) func([]byte) error {
	return func(out []byte) error {
		for _, s := range ss {
			if !strings.Contains(string(out), s) {
				return fmt.Errorf("printed no %q", s)
			}
		}
		return nil
	}
}
