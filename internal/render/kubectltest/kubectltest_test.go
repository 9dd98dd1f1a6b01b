package kubectltest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// GetJSON is kubectl get's List: the items as kubectl read them (a raw
// number it read as a float comes out as kubectl writes it), kind List, an
// empty resourceVersion, indented by four.
func TestGetJSONIsKubectlsList(t *testing.T) {
	rev := &appsv1.ControllerRevision{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ControllerRevision"},
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop"},
		Data:       runtime.RawExtension{Raw: []byte(`{"n":1.0,"e":1e3}`)},
	}
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"}}
	got, err := GetJSON([]runtime.Object{rev, pod})
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Kind     string            `json:"kind"`
		Items    []json.RawMessage `json:"items"`
		Metadata map[string]string `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(got), &list); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, got)
	}
	if list.Kind != "List" || len(list.Items) != 2 || list.Metadata["resourceVersion"] != "" || !strings.HasPrefix(got, "{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n        {") {
		t.Errorf("not kubectl's List:\n%s", got)
	}
	if !strings.Contains(got, `"e": 1000,`) || !strings.Contains(got, `"n": 1`) {
		t.Errorf("raw numbers are not as kubectl writes them:\n%s", got)
	}
}

// The same seed fills the same objects: a failure is the same failure when
// run again.
func TestKindFillerIsSeeded(t *testing.T) {
	fill := func(seed int64) *appsv1.Deployment {
		d := &appsv1.Deployment{}
		KindFiller(seed, RewrittenRaw).Fill(d)
		return d
	}
	if a, b := fill(7), fill(7); !reflect.DeepEqual(a, b) {
		t.Error("two fillers of one seed filled two deployments")
	}
	if a, b := fill(7), fill(8); reflect.DeepEqual(a, b) {
		t.Error("fillers of two seeds filled one deployment")
	}
}

func TestFirstDifferenceShowsWhereTheyPart(t *testing.T) {
	got := FirstDifference(`{"a": 1, "b": 2}`, `{"a": 1, "b": 3}`)
	if got != "regctl:  ...{\"a\": 1, \"b\": 2}\nkubectl: ...{\"a\": 1, \"b\": 3}" {
		t.Errorf("%q", got)
	}
}
