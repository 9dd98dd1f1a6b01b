package storagemap

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
)

// TestAManifestsWriteInstallsItsKinds checks that a map built for writing a
// manifest installs the resources of its kinds and namespaces, which its
// writes look their namespace up through, and that the loopback installs a
// version the stores or kubectl reach beyond them when they reach it.
func TestAManifestsWriteInstallsItsKinds(t *testing.T) {
	kinds := []schema.GroupVersionKind{{Version: "v1", Kind: "ConfigMap"}, {Group: "apps", Version: "v1", Kind: "Deployment"}}
	w := buildConfig(t, Config{Kinds: kinds, FieldManagement: true})
	var got []string
	for _, r := range w.Map.Table.Routes {
		if base := r.Resource; !slices.Contains(got, base) {
			got = append(got, base)
		}
	}
	if want := []string{"configmaps", "namespaces", "deployments"}; !slices.Equal(got, want) {
		t.Errorf("a manifest of config maps and deployments installs %v, want %v", got, want)
	}
	for _, k := range kinds {
		if h, err := w.Map.ResolveKind(k); err != nil || h.Storage == nil {
			t.Errorf("ResolveKind(%s): %v", k, err)
		}
	}
	if _, err := w.Map.Subresource(w.Map.Handles["deployments.apps"], "scale"); err != nil {
		t.Errorf("deployments.apps/scale: %v", err)
	}
	client, err := kubernetes.NewForConfig(w.LoopbackConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.BatchV1().Jobs("default").List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Errorf("listing jobs through the loopback, which the map did not install: %v", err)
	}

	// A kind the map does not serve builds the whole map, for the error.
	w = buildConfig(t, Config{Kinds: []schema.GroupVersionKind{{Group: "example.com", Version: "v1", Kind: "Widget"}}})
	if len(w.Map.Table.Routes) < 100 {
		t.Errorf("a kind nothing serves: %d routes, want the whole map", len(w.Map.Table.Routes))
	}
}
