package stores

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/storagemap/maptest"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
)

// defaultingCRD is a CRD, established, whose schemas default what its
// values do not hold: spec.mode (each version its own), a field of each
// item of spec.ports, status (no status subresource); spec.extra is not
// in them, and is pruned.
const defaultingCRD = `{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
"metadata": {"name": "gizmos.example.com", "uid": "u1", "creationTimestamp": "2026-01-01T00:00:00Z"},
"spec": {"group": "example.com", "scope": "Namespaced",
  "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo", "listKind": "GizmoList"},
  "versions": [
    {"name": "v1alpha1", "served": true, "storage": false, "schema": {"openAPIV3Schema": %[1]s}},
    {"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": %[2]s}}]},
"status": {"acceptedNames": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo", "listKind": "GizmoList"},
  "storedVersions": ["v1alpha1", "v1"], "conditions": [
  {"type": "NamesAccepted", "status": "True", "reason": "Test", "lastTransitionTime": "2026-01-01T00:00:00Z"},
  {"type": "Established", "status": "True", "reason": "Test", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}`

func gizmoSchema(mode string) string {
	return `{"type": "object", "properties": {
  "spec": {"type": "object", "properties": {
    "mode": {"type": "string", "default": "` + mode + `"},
    "ports": {"type": "array", "items": {"type": "object", "properties": {"port": {"type": "integer"}, "protocol": {"type": "string", "default": "TCP"}}}}}},
  "status": {"type": "object", "default": {"phase": "Pending"}, "properties": {"phase": {"type": "string"}}}}}`
}

// TestAListDecodesAsTheStoresOwnList puts values in etcd as a server
// stores them, without what their schema or scheme defaults when it reads
// them: custom resources at two versions, one with a field its schema
// prunes, and a pod. Every list, through every version, windowed or not,
// holds what the store's own List holds: the CRD handler's codec
// defaults, prunes and converts custom resources, and the scheme defaults
// pods.
func TestAListDecodesAsTheStoresOwnList(t *testing.T) {
	ctx := context.Background()
	s, client := maptest.Open(t)
	crds := s.Map.Handles["customresourcedefinitions.apiextensions.k8s.io"]
	crdKey, err := crds.Key("", "gizmos.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Put(ctx, crdKey, fmt.Sprintf(defaultingCRD, gizmoSchema("legacy"), gizmoSchema("modern"))); err != nil {
		t.Fatal(err)
	}
	m, err := s.Beside(ctx, storagemap.Config{Options: serverflags.NewOptions(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	gizmos := map[string]string{
		"old":  `{"apiVersion":"example.com/v1alpha1","kind":"Gizmo","metadata":{"name":"old","namespace":"default","uid":"u2"},"spec":{"ports":[{"port":80}],"extra":"pruned"}}`,
		"new":  `{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"name":"new","namespace":"default","uid":"u3"},"spec":{"mode":"set","ports":[{"port":443},{"port":53,"protocol":"UDP"}]}}`,
		"bare": `{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"name":"bare","namespace":"default","uid":"u4"}}`,
	}
	for name, value := range gizmos {
		key, err := m.Map.Handles["gizmos.example.com"].Key("default", name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.Put(ctx, key, value); err != nil {
			t.Fatal(err)
		}
	}
	pods := m.Map.Handles["pods"]
	var pod bytes.Buffer
	if err := pods.StorageCodec().Encode(&api.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u5"},
		Spec: api.PodSpec{Containers: []api.Container{{Name: "web", Image: "nginx"}}}}, &pod); err != nil {
		t.Fatal(err)
	}
	podKey, err := pods.Key("default", "web")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Put(ctx, podKey, pod.String()); err != nil {
		t.Fatal(err)
	}

	for _, path := range []string{"gizmos.example.com", "gizmos.v1alpha1.example.com", "pods"} {
		h, err := m.Map.Handles[path].Serving()
		if err != nil {
			t.Fatal(err)
		}
		target := handle.Target{Handle: h, Namespace: "default"}
		reqCtx := RequestContext(ctx, target)
		own, err := h.Storage.(rest.Lister).List(reqCtx, &metainternalversion.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := itemsJSON(t, own)
		// What the store defaults and prunes, so that the comparison
		// proves something.
		all := fmt.Sprint(want)
		for _, defaulted := range map[bool][]string{true: {`"mode":"legacy"`, `"phase":"Pending"`, `"protocol":"TCP"`}, false: {`"RestartPolicy":"Always"`}}[path != "pods"] {
			if !strings.Contains(all, defaulted) {
				t.Errorf("%s: the store lists no %s: %s", path, defaulted, all)
			}
		}
		if strings.Contains(all, "extra") {
			t.Errorf("%s: the store lists what the schema prunes: %s", path, all)
		}
		for _, chunk := range []int64{0, 1} {
			var got []string
			err := List(ctx, target, ListOptions{ChunkSize: chunk}, func(p Page) error {
				got = append(got, itemsJSON(t, p.List)...)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s, pages of %d: listed\n%s\nthe store lists\n%s", path, chunk, got, want)
			}
		}
	}
}

// itemsJSON is each item of list as JSON.
func itemsJSON(t *testing.T, list runtime.Object) []string {
	t.Helper()
	items, err := meta.ExtractList(list)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, item := range items {
		data, err := json.Marshal(item)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(data))
	}
	return out
}
