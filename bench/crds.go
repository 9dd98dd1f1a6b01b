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
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/logs"
)

// crdSources holds real projects' CRDs, one directory per project, each
// with a SOURCE.md naming where they come from.
const crdSources = "bench/testdata/crds"

// customResources is how many custom resources the CRD sandbox gets,
// spread over four kinds of the real set.
const customResources = 100

// crds measures regctl on two sandboxes (--data-dir) holding the same pods:
// one with nothing else, and one with count CRDs made from real projects'
// CRDs (bench/testdata/crds: the real set once as it is, then copies of it
// under renamed groups) and a hundred custom resources of four of them. It
// reports the one-shot create of the CRDs, then the same commands on both
// sandboxes side by side. These are the figures of a command that pays for
// every CRD in etcd, whatever it touches.
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
	plain := filepath.Join(dir, "sandbox-pods")
	withCRDs := filepath.Join(dir, "sandbox-crds")

	progress(fmt.Sprintf("writing %d pods into a sandbox", pods))
	start := time.Now()
	e, err := etcdview.StartOn(plain, 0, nil)
	if err != nil {
		return err
	}
	if err := seedPods(ctx, e.ClientURL, pods); err != nil {
		e.Close()
		return err
	}
	if err := e.Close(); err != nil {
		return err
	}
	// The second sandbox starts as a copy of the first, so both hold the
	// very same pods.
	if out, err := exec.Command("cp", "-a", plain, withCRDs).CombinedOutput(); err != nil {
		return fmt.Errorf("copying the sandbox: %w: %s", err, out)
	}
	progress(fmt.Sprintf("pods written in %s", time.Since(start).Round(time.Second)))

	manifest := filepath.Join(dir, "crds.yaml")
	size, err := writeCRDs(manifest, real, count)
	if err != nil {
		return err
	}
	fmt.Printf("%d CRDs from %d real ones (%s), %.1f MiB of manifest\n", count, len(real), crdProjects(real), float64(size)/(1<<20))

	// The create of the CRDs, once: each run would need a fresh sandbox
	// of pods, and it is the figure of a setup, not of a command.
	progress(fmt.Sprintf("creating %d CRDs with regctl create -f", count))
	created, err := runOnce(launcher, command{
		name: fmt.Sprintf("regctl create -f (%d CRDs)", count), bin: regctl,
		args: []string{"create", "-f", manifest, "--data-dir", withCRDs, "-o", "name"},
	}, true)
	if err != nil {
		return err
	}
	if got := strings.Count(string(created.stdout), "customresourcedefinition"); got != count {
		return fmt.Errorf("regctl create -f of %d CRDs printed %d of them", count, got)
	}
	crs := filepath.Join(dir, "crs.yaml")
	if err := writeCustomResources(crs); err != nil {
		return err
	}
	progress(fmt.Sprintf("creating %d custom resources with regctl create -f", customResources))
	createdCRs, err := runOnce(launcher, command{
		name: fmt.Sprintf("regctl create -f (%d custom resources)", customResources), bin: regctl,
		args: []string{"create", "-f", crs, "--data-dir", withCRDs, "-o", "name"},
	}, true)
	if err != nil {
		return err
	}
	if got := strings.Count(strings.TrimSpace(string(createdCRs.stdout)), "\n") + 1; got != customResources {
		return fmt.Errorf("regctl create -f of %d custom resources printed %d lines", customResources, got)
	}

	for _, s := range []struct{ name, dir string }{{"without CRDs", plain}, {"with CRDs", withCRDs}} {
		if err := describeSandbox(ctx, s.name, s.dir); err != nil {
			return err
		}
	}
	fmt.Println()
	fmt.Println("one-shot, on the sandbox of pods:")
	t := newTable(launcher, 60, false)
	t.row(fmt.Sprintf("regctl create -f (%d CRDs)", count), stats{median: created.wall, min: created.wall, max: created.wall, peakRSS: created.maxRSS}, "")
	t.row(fmt.Sprintf("regctl create -f (%d custom resources)", customResources), stats{median: createdCRs.wall, min: createdCRs.wall, max: createdCRs.wall, peakRSS: createdCRs.maxRSS}, "")

	fmt.Println()
	fmt.Printf("each command on both sandboxes (%d pods; %d CRDs and %d custom resources more):\n", pods, count, customResources)
	t = newTable(launcher, 60, true)
	t.header = "vs no CRDs"
	pod, _ := benchPod(0)
	type bench struct {
		name   string
		args   []string
		verify func([]byte) error
	}
	benches := []bench{
		{"get namespaces", []string{"get", "namespaces"}, contains(benchNamespaces...)},
		{"get pods -A -o name", []string{"get", "pods", "-A", "-o", "name"}, occurs("pod/", pods)},
		{"routes", []string{"routes"}, nil},
		{"keys", []string{"keys"}, contains("pods")},
		{"scan", []string{"scan"}, nil},
		{"get pods NAME -o yaml", []string{"get", "pods", pod.Name, "-n", pod.Namespace, "-o", "yaml"}, contains("name: " + pod.Name)},
	}
	for _, b := range benches {
		c := func(label, sandbox string) command {
			return command{
				name: fmt.Sprintf("regctl %s (%s)", b.name, label), bin: regctl,
				args: append(append([]string(nil), b.args...), "--data-dir", sandbox), verify: b.verify,
			}
		}
		anchor, err := t.add(c("no CRDs", plain), n, func(stats) string { return "anchor" })
		if err != nil {
			return err
		}
		if _, err := t.add(c(fmt.Sprintf("%d CRDs", count), withCRDs), n, func(st stats) string { return fmt.Sprintf("%.2fx", ratio(st, anchor)) }); err != nil {
			return err
		}
		if b.name == "get pods NAME -o yaml" {
			// The custom resource has no counterpart without CRDs: it
			// is set against the read of one pod there.
			_, err := t.add(command{
				name: fmt.Sprintf("regctl get issuers.cert-manager.io NAME -o yaml (%d CRDs)", count), bin: regctl,
				args:   []string{"get", "issuers.cert-manager.io", "issuer-00", "-n", benchNamespaces[0], "-o", "yaml", "--data-dir", withCRDs},
				verify: contains("kind: Issuer", "name: issuer-00"),
			}, n, func(st stats) string { return fmt.Sprintf("%.2fx the pod", ratio(st, anchor)) })
			if err != nil {
				return err
			}
		}
	}
	return nil
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
	e, err := etcdview.StartOn(dir, 0, nil)
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
