package scan

import (
	"context"
	"fmt"
	"slices"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/regctl/regctl/internal/storagemap/maptest"
)

// resourceOf is the report's figures of resource, failing when it has none.
func resourceOf(t *testing.T, r *Report, resource string) Resource {
	t.Helper()
	i := slices.IndexFunc(r.Resources, func(res Resource) bool { return res.Resource == resource })
	if i < 0 {
		t.Fatalf("the report has no %s: %+v", resource, r.Resources)
	}
	return r.Resources[i]
}

// TestEachSectionTellsWhatIsStored scans values written as a server of
// this release writes them, and others it would not write now: a config
// map in JSON (the server writes protobuf), an HPA at autoscaling/v1 (it
// stores v2) and one whose key names another object. Each section counts
// them where they are, and each finding names its key.
func TestEachSectionTellsWhatIsStored(t *testing.T) {
	ctx := context.Background()
	s, etcd := maptest.Open(t)
	put := func(key string, value []byte) {
		t.Helper()
		if _, err := etcd.Put(ctx, key, string(value)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		name := fmt.Sprintf("p%d", i)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)}, Data: map[string]string{"k": "v"}}
		put("/registry/configmaps/default/"+name, maptest.EncodeAt(t, cm, corev1.SchemeGroupVersion))
	}
	put("/registry/configmaps/default/j", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"j","namespace":"default","uid":"uid-j"},"data":{"k":"v"}}`))
	hpa := func(name string) []byte {
		return maptest.EncodeAt(t, &autoscalingv1.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name), CreationTimestamp: metav1.Now()},
			Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"},
				MaxReplicas:    3,
			},
		}, autoscalingv1.SchemeGroupVersion)
	}
	put("/registry/horizontalpodautoscalers/default/old", hpa("old"))
	put("/registry/horizontalpodautoscalers/default/elsewhere", hpa("misnamed"))

	r, err := Run(ctx, keyspace(s, etcd), Options{Sections: []string{Size, Encoding, Versions, Corrupt}})
	if err != nil {
		t.Fatal(err)
	}
	cms := resourceOf(t, r, "configmaps")
	if cms.Keys != 4 || cms.Bytes == 0 || len(cms.Largest) == 0 {
		t.Errorf("configmaps: %d keys, %d bytes, largest %v; want 4 keys", cms.Keys, cms.Bytes, cms.Largest)
	}
	if e := cms.Encoding; e == nil || e.Counts["application/vnd.kubernetes.protobuf"] != 3 || e.Counts["application/json"] != 1 || e.Writes != "application/vnd.kubernetes.protobuf" {
		t.Errorf("configmaps' encodings %+v, want 3 protobuf and 1 json, protobuf written", e)
	}
	hpas := resourceOf(t, r, "horizontalpodautoscalers.autoscaling")
	if v := hpas.Versions; v == nil || v.Counts["autoscaling/v1"] != 2 || v.Writes != "autoscaling/v2" {
		t.Errorf("HPAs' versions %+v, want 2 at autoscaling/v1, v2 written", v)
	}
	reasons := map[string]string{}
	for _, f := range r.Findings {
		reasons[f.Key] = f.Reason
	}
	for key, want := range map[string]string{
		"/registry/horizontalpodautoscalers/default/old":       ReasonOldVersion,
		"/registry/horizontalpodautoscalers/default/elsewhere": ReasonWrongKey,
	} {
		if reasons[key] != want {
			t.Errorf("%s: finding %q, want %q (findings %+v)", key, reasons[key], want, r.Findings)
		}
	}
	if _, found := reasons["/registry/configmaps/default/j"]; found {
		t.Errorf("a JSON value is a finding: the server reads it as it is (findings %+v)", r.Findings)
	}
}
