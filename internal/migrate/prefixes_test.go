package migrate

import (
	"context"
	"slices"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storagemap/maptest"
)

// TestPrefixesAreTheKeysACommandNames reads the prefixes of every shape
// of migrate's command line: nothing named, a namespace, types, types in a
// namespace, and a type with no keys.
func TestPrefixesAreTheKeysACommandNames(t *testing.T) {
	s, _ := maptest.Open(t)
	all := s.Map.Ordered()
	hs := s.Map.Handles
	for _, c := range []struct {
		name      string
		named     []*handle.Handle
		namespace string
		want      []string
	}{
		{"everything", nil, "", nil},
		{"one type", []*handle.Handle{hs["secrets"]}, "", []string{"/registry/secrets/"}},
		{"types in a namespace", []*handle.Handle{hs["secrets"], hs["nodes"]}, "shop", []string{"/registry/secrets/shop/", "/registry/minions/"}},
		{"two versions of one resource", []*handle.Handle{hs["horizontalpodautoscalers.autoscaling"], hs["horizontalpodautoscalers.v1.autoscaling"]}, "", []string{"/registry/horizontalpodautoscalers/"}},
	} {
		got, err := Prefixes(all, c.named, c.namespace)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	// A namespace alone: its namespaced resources' keys, none of a
	// cluster-scoped one.
	got, err := Prefixes(all, nil, "shop")
	if err != nil || !slices.Contains(got, "/registry/configmaps/shop/") || slices.Contains(got, "/registry/minions/") || slices.Contains(got, "/registry/namespaces/") {
		t.Errorf("-n shop: %q, %v", got, err)
	}
	if _, err := Prefixes(all, []*handle.Handle{hs["tokenreviews.authentication.k8s.io"]}, ""); err == nil || err.Error() != "tokenreviews.authentication.k8s.io is not stored in etcd" {
		t.Errorf("a path with no keys of its own: %v", err)
	}
}

// TestAMigrationRewritesOnlyUnderItsPrefixes stores an HPA at an old
// version in two namespaces and migrates one (the namespace it is
// rewritten in exists, as a write needs): the other is left as it
// was, and a dry run before it writes nothing at all.
func TestAMigrationRewritesOnlyUnderItsPrefixes(t *testing.T) {
	ctx := context.Background()
	s, etcd := openMap(t)
	hpa := func(ns string) []byte {
		return maptest.EncodeAt(t, &autoscalingv1.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, UID: types.UID("uid-" + ns), CreationTimestamp: metav1.Now()},
			Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"},
				MaxReplicas:    3,
			},
		}, autoscalingv1.SchemeGroupVersion)
	}
	def := put(t, etcd, "/registry/horizontalpodautoscalers/default/web", hpa("default"))
	other := put(t, etcd, "/registry/horizontalpodautoscalers/other/web", hpa("other"))
	ks := handle.Keyspace{Client: etcd, EtcdPrefix: "/registry", Handles: s.Map.Ordered()}
	prefixes, err := Prefixes(ks.Handles, []*handle.Handle{s.Map.Handles["horizontalpodautoscalers.autoscaling"]}, "default")
	if err != nil {
		t.Fatal(err)
	}

	before, err := etcdview.Revision(ctx, etcd)
	if err != nil {
		t.Fatal(err)
	}
	dry, err := Run(ctx, ks, Request{Versions: true, Prefixes: prefixes, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if after, err := etcdview.Revision(ctx, etcd); err != nil || after != before {
		t.Errorf("a dry run moved the revision from %d to %d (%v)", before, after, err)
	}
	if len(dry.Resources) != 1 || dry.Resources[0].Selected != 1 || dry.Resources[0].Rewritten != 0 || !dry.DryRun {
		t.Errorf("dry run: %+v, want the one HPA of default chosen and none written", dry.Resources)
	}

	report, err := Run(ctx, ks, Request{Versions: true, Prefixes: prefixes})
	if err != nil || report.NotDone() {
		t.Fatalf("migrate: %v, %+v", err, report)
	}
	if len(report.Resources) != 1 || report.Resources[0].Rewritten != 1 {
		t.Errorf("resources %+v, want one rewritten", report.Resources)
	}
	if got := storedAt(t, get(t, etcd, "/registry/horizontalpodautoscalers/default/web")); got != "autoscaling/v2" || slices.Equal(get(t, etcd, "/registry/horizontalpodautoscalers/default/web"), def) {
		t.Errorf("default's HPA is at %s after the migration", got)
	}
	if !slices.Equal(get(t, etcd, "/registry/horizontalpodautoscalers/other/web"), other) {
		t.Error("the HPA outside the prefixes was rewritten")
	}
}
