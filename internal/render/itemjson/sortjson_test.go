package itemjson

import (
	"encoding/json"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Sorting a typed object's JSON gives exactly what encoding/json writes of
// the same object as unstructured, which is what kubectl prints.
func TestSortedKeysAreTheUnstructuredEncoding(t *testing.T) {
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "shop", UID: "u-1",
			Labels:      map[string]string{"b": "2", "a": "1", "app.kubernetes.io/name": "web"},
			Annotations: map[string]string{"note": `quote " backslash \ <tag> & ünï ` + "\n\t", "z": ""},
			Finalizers:  []string{},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "c", Image: "busybox", Args: []string{"a,b", "{x}", "[y]"},
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"memory": resource.MustParse("64Mi"), "cpu": resource.MustParse("250m")}},
				Env:       []corev1.EnvVar{{Name: "E", Value: `{"k":[1,2]}`}},
			}},
			NodeSelector: map[string]string{},
		},
	}
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "cfg"},
		Data:       map[string]string{"b.json": `{"b":1,"a":2}`, "a": "x"},
		BinaryData: map[string][]byte{"bin": {0, 1, 2}},
	}
	for _, obj := range []runtime.Object{pod, cm, &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}}} {
		typed, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendSortedKeys(nil, typed); string(got) != string(want) {
			t.Errorf("sorted:\n%s\nunstructured:\n%s", got, want)
		}
	}
}

func TestSortedKeysOfEscapedKeys(t *testing.T) {
	got := appendSortedKeys(nil, []byte(`{"b":1,"\u0061":[{"d":{},"c":[]},2],"a\"":null}`))
	if want := `{"\u0061":[{"c":[],"d":{}},2],"a\"":null,"b":1}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// kubectlsScalar says a scalar is kubectl's exactly when kubectl get, which
// reads JSON into Go values twice, prints it as it is: every \u00XX escape,
// escapes encoding/json never writes, raw characters it would escape, and
// numbers it would write otherwise.
func TestKubectlsScalarIsWhatKubectlPrints(t *testing.T) {
	literals := []string{
		`true`, `false`, `null`, `0`, `-0`, `-0.0`, `1`, `-1`, `1.0`, `1.5`, `1e3`, `1E3`, `1e+21`, `1e21`,
		`1e-7`, `1E-7`, `0.000001`, `123456789012345678`, `1234567890123456789`, `-9223372036854775808`,
		`9223372036854775808`, `12345678901234567890`, `100000000000000000000`, `1.7976931348623157e+308`,
		`""`, `"plain"`, `"\""`, `"\\"`, `"\/"`, `"\b"`, `"\f"`, `"\n"`, `"\r"`, `"\t"`,
		`"\u2028"`, `"\u2029"`, `"\ufffd"`, `"\uFFFD"`, `"\u00e9"`, `"\ud83d\ude00"`, `"\u003C"`,
		"\"\u2028\"", "\"<\"", "\"é😀\"", "\"\xff\"", "\"\x7f\"",
	}
	for c := 0; c < 0x100; c++ {
		literals = append(literals, fmt.Sprintf(`"\u%04x"`, c))
	}
	for _, lit := range literals {
		printed := []byte(lit)
		for range 2 {
			var v any
			if err := utiljson.Unmarshal(printed, &v); err != nil {
				t.Fatalf("kubectl reading %s: %v", printed, err)
			}
			var err error
			if printed, err = json.Marshal(v); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := kubectlsScalar([]byte(lit)), string(printed) == lit; got != want {
			t.Errorf("kubectlsScalar(%s) = %v; kubectl prints %s", lit, got, printed)
		}
	}
}
