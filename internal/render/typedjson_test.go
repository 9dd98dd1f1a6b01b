package render

import (
	"encoding/json"
	"math"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/api/resource"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/intstr"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/randfill"
)

// kubectlJSON is what kubectl get prints of obj as an item of a list,
// for values that are no runtime.Object: the object as JSON, read into Go
// values as kubectl reads JSON, once from the server's response and once
// from the List it makes, and indented by encoding/json, which writes a
// map's keys in order.
func kubectlJSON(t *testing.T, obj any) (string, error) {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		return "", err
	}
	var u any
	for range 2 {
		if err := utiljson.Unmarshal(data, &u); err != nil {
			t.Fatalf("reading back %s: %v", data, err)
		}
		if data, err = json.Marshal(u); err != nil {
			t.Fatal(err)
		}
	}
	out, err := json.MarshalIndent(u, "        ", "    ")
	return string(out), err
}

func typedItem(obj any) (string, error) {
	var e typedJSON
	out, err := e.append(nil, obj, 8)
	return string(out), err
}

func checkTypedJSON(t *testing.T, obj any) {
	t.Helper()
	want, wantErr := kubectlJSON(t, obj)
	got, err := typedItem(obj)
	switch {
	case wantErr != nil && err == nil:
		t.Errorf("%T: encoding/json fails (%v), the plan does not:\n%s", obj, wantErr, got)
	case wantErr == nil && err != nil:
		t.Errorf("%T: the plan fails: %v", obj, err)
	case got != want:
		t.Errorf("%T:\n%s", obj, firstDifference(got, want))
	}
}

func firstDifference(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-200)
	return "plan:    ..." + got[from:min(len(got), i+100)] + "\nkubectl: ..." + want[from:min(len(want), i+100)]
}

// kindFiller fills objects of built-in kinds at random: strings of any
// runes, nil and empty slices and maps, unset pointers, and values that
// are valid where the types cannot hold anything (quantities, raw JSON).
func kindFiller(seed int64) *randfill.Filler {
	funcs := fuzzer.MergeFuzzerFuncs(metafuzzer.Funcs, func(serializer.CodecFactory) []any {
		return []any{
			func(q *resource.Quantity, c randfill.Continue) {
				*q = *resource.NewMilliQuantity(c.Int63n(1<<40), resource.DecimalSI)
			},
			func(v *intstr.IntOrString, c randfill.Continue) {
				if c.Bool() {
					*v = intstr.FromInt32(c.Int31())
				} else {
					*v = intstr.FromString(c.String(0))
				}
			},
			func(r *runtime.RawExtension, c randfill.Continue) {
				if c.Bool() {
					r.Raw = []byte(`{"b":[1,{"d":"<x>","c":null}],"a":"` + "\u2028" + `"}`)
				}
			},
			func(f *metav1.FieldsV1, c randfill.Continue) {
				f.Raw = []byte(`{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`)
			},
		}
	})
	// Some kinds nest many levels deep, each level a list of up to three
	// more: a bound on the depth keeps a fill from growing without end.
	return fuzzer.FuzzerFor(funcs, rand.NewSource(seed), scheme.Codecs).NilChance(0.2).NumElements(0, 3).MaxDepth(12)
}

// Every kind of every built-in group, filled at random (strings of any
// runes, nil and empty slices and maps, unset pointers): the plans write
// what kubectl writes.
func TestTypedJSONIsKubectlsForEveryBuiltInKind(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	filler := kindFiller(seed)
	kinds := 0
	for gvk, typ := range scheme.Scheme.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal {
			continue
		}
		kinds++
		for range 3 {
			obj := reflect.New(typ).Interface()
			filler.Fill(obj)
			checkTypedJSON(t, obj)
		}
	}
	if kinds < 500 {
		t.Fatalf("only %d kinds in client-go's scheme", kinds)
	}
}

// What Kubernetes' types hold rarely but encoding/json handles: the plans
// hand those to it, and keep its rules for the rest.
func TestTypedJSONFollowsEncodingJSON(t *testing.T) {
	type Inner struct {
		B string `json:"b"`
		A string `json:"a,omitempty"`
	}
	type Embedded struct {
		Inner
		Z int `json:"z"`
	}
	type odd struct {
		Embedded `json:",inline"`
		*Inner2
		Float     float64            `json:"float"`
		Iface     any                `json:"iface"`
		Array     [2]string          `json:"array"`
		Quoted    int                `json:"quoted,string"`
		Bytes     []byte             `json:"bytes"`
		NilBytes  []byte             `json:"nilBytes"`
		IntMap    map[int]string     `json:"intMap"`
		NestedMap map[string][]Inner `json:"nestedMap"`
		Zero      metav1.Time        `json:"zero,omitzero"`
		ZeroPtr   *metav1.Time       `json:"zeroPtr,omitzero"`
		Empty     Inner              `json:"empty,omitempty"`
		Skipped   string             `json:"-"`
		Dash      string             `json:"-,"`
		NoTag     string
		unexp     string
		Strange   string `json:"ö<>"`
		Escapes   string `json:"escapes"`
		Uint      uint8  `json:"uint"`
		Big       uint64 `json:"big"`
		Bool      bool   `json:"bool,omitempty"`
	}
	_ = odd{}.unexp
	for _, v := range []any{
		&odd{
			Embedded: Embedded{Inner: Inner{B: "b"}, Z: 1},
			Float:    1.5e300, Iface: map[string]any{"y": 1, "x": []any{}}, Array: [2]string{"q", "p"},
			Quoted: 7, Bytes: []byte{0, 255, 10}, IntMap: map[int]string{10: "a", 9: "b"},
			NestedMap: map[string][]Inner{"k": {{B: "1"}}, "e": {}, "n": nil},
			Zero:      metav1.Time{}, ZeroPtr: &metav1.Time{},
			Dash: "dash", NoTag: "notag", Strange: "s",
			Escapes: escapes, Big: math.MaxUint64,
		},
		&odd{Inner2: &Inner2{C: "c"}},
		&Embedded{},
		&struct {
			Big   uint64 `json:"big"`
			Small uint64 `json:"small"`
		}{Big: math.MaxUint64, Small: math.MaxInt64},
		&Inner{B: escapes, A: "invalid \xff\xfe utf-8 \ufffd " + `\ufffd`},
		&corev1.Pod{},
		&corev1.List{Items: []runtime.RawExtension{{Object: &corev1.Pod{}}, {Raw: []byte(`{"kind":"Pod"}`)}}},
		// Raw JSON kubectl prints otherwise than it is written.
		&corev1.List{Items: []runtime.RawExtension{{Raw: []byte(`{"kind":"Pod","n":[1.0,-0.0,1e3,1E-7,12345678901234567890],"s":"é\/<","kind":"Pod"}`)}}},
		&metav1.Status{Details: &metav1.StatusDetails{RetryAfterSeconds: 3}},
	} {
		checkTypedJSON(t, v)
	}
}

const escapes = "quote \" back \\ <tag> & \u2028 \u2029 \x01 \x1f \x7f \b \f \n \r \t \xff é 😀"

type Inner2 struct {
	C string `json:"c"`
}

// A pod as a server stores one, with the values that need escaping.
func TestTypedJSONOfAPod(t *testing.T) {
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "shop", UID: "u-1", CreationTimestamp: metav1.Unix(1700000000, 0),
			Labels:      map[string]string{"b": "2", "a": "1", "app.kubernetes.io/name": "web"},
			Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"<web>"}}` + "\n"},
			ManagedFields: []metav1.ManagedFieldsEntry{{
				Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1",
				FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{}}}}}`)},
			}},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "c", Image: "busybox", Command: []string{"sh", "-c", "echo 'a && b' > /x"},
				Ports:     []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"memory": resource.MustParse("64Mi"), "cpu": resource.MustParse("250m")}},
				LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
					Port: intstr.FromString("http"), Path: "/healthz?a=1&b=2"}}},
			}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{
			Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Unix(1700000100, 0),
		}}},
	}
	checkTypedJSON(t, pod)
	got, err := typedItem(pod)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "\n                \"creationTimestamp\": \"2023-11-14T22:13:20Z\",\n") {
		t.Errorf("creationTimestamp not written at the second level:\n%s", got)
	}
}
