// Package servermanifest reads a kube-apiserver static Pod manifest (what
// kubeadm writes to /etc/kubernetes/manifests/kube-apiserver.yaml) for the
// server's command line, so that regctl builds the map of that server.
package servermanifest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// Flag is one flag of the server's command line.
type Flag struct {
	Name  string // without dashes
	Value string
}

// Server is the kube-apiserver container of a manifest.
type Server struct {
	// Image is the container's image, whose tag is the server's release.
	Image string
	// Flags are its flags, in their order.
	Flags []Flag
}

// Read returns the kube-apiserver container of the Pod in the manifest
// file. A file that is not a Pod, or a Pod with no container running
// kube-apiserver, is refused with the reason.
func Read(file string) (Server, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return Server{}, fmt.Errorf("reading the apiserver manifest: %w", err)
	}
	var pod corev1.Pod
	if err := yaml.Unmarshal(data, &pod); err != nil {
		return Server{}, fmt.Errorf("reading the apiserver manifest %s: not YAML or JSON: %w", file, err)
	}
	if pod.Kind != "Pod" || pod.APIVersion != "v1" {
		return Server{}, fmt.Errorf("reading the apiserver manifest %s: it is a %q of %q, not a v1 Pod", file, pod.Kind, pod.APIVersion)
	}
	for _, c := range pod.Spec.Containers {
		words := append(append([]string(nil), c.Command...), c.Args...)
		for i, w := range words {
			if filepath.Base(w) == "kube-apiserver" {
				flags, err := parse(file, c.Name, words[i+1:])
				return Server{Image: c.Image, Flags: flags}, err
			}
		}
	}
	return Server{}, fmt.Errorf("reading the apiserver manifest %s: no container of Pod %s runs kube-apiserver", file, pod.Name)
}

// parse reads --name=value, --name value and boolean --name words.
func parse(file, container string, words []string) ([]Flag, error) {
	var out []Flag
	for i := 0; i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "--") || len(w) == 2 {
			return nil, fmt.Errorf("reading the apiserver manifest %s: container %s: %q is not a flag", file, container, w)
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(w, "--"), "=")
		if !hasValue && i+1 < len(words) && !strings.HasPrefix(words[i+1], "--") {
			value, hasValue = words[i+1], true
			i++
		}
		if !hasValue {
			value = "true"
		}
		out = append(out, Flag{Name: name, Value: value})
	}
	return out, nil
}

// Under resolves path, as the manifest names it on its node, under root:
// the node's filesystem copied to root. An empty root leaves path as it is.
func Under(root, path string) string {
	if root == "" || !filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(root, path)
}
