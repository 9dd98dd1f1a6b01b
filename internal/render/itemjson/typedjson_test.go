package itemjson

import (
	"encoding/json"
	"flag"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/regctl/regctl/internal/render/kubectltest"
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
		t.Errorf("%T:\n%s", obj, kubectltest.FirstDifference(got, want))
	}
}

// kindsSeed makes the filled objects the same in every run, so that a
// failure is the same failure when run again; -typedjson.seed tries others.
const kindsSeed = 49

var seedFlag = flag.Int64("typedjson.seed", kindsSeed, "seed of the objects TestTypedJSONIsKubectlsForEveryBuiltInKind fills")

// Every kind of every built-in group, and of the CRDs' and APIServices'
// servers, filled at random (strings of any runes, nil and empty slices and
// maps, unset pointers, raw JSON that kubectl rewrites) in several rounds:
// a json list of one of them is what kubectl get -o json prints of it,
// byte for byte; so are, in the first round, a list of each as kubectl
// holds a custom resource (unstructured) and a list of all of them.
func TestTypedJSONIsKubectlsForEveryBuiltInKind(t *testing.T) {
	t.Logf("seed %d", *seedFlag)
	filler := kubectltest.KindFiller(*seedFlag, kubectltest.RewrittenRaw)
	gvks := slices.SortedFunc(maps.Keys(kubectltest.BuiltIn.AllKnownTypes()), func(a, b schema.GroupVersionKind) int {
		return strings.Compare(a.String(), b.String())
	})
	kinds := 0
	var all []runtime.Object
	for round := range 3 {
		for _, gvk := range gvks {
			if gvk.Version == runtime.APIVersionInternal {
				continue
			}
			if round == 0 {
				kinds++
			}
			obj := reflect.New(kubectltest.BuiltIn.AllKnownTypes()[gvk]).Interface().(runtime.Object)
			filler.Fill(obj)
			obj.GetObjectKind().SetGroupVersionKind(gvk)
			if obj.GetObjectKind().GroupVersionKind().Empty() {
				// No kind of its own (a watch event): nothing kubectl
				// reads as an object; as an item, what kubectl's
				// reading of its JSON would print.
				checkTypedJSON(t, obj)
				continue
			}
			checkList(t, gvk.String(), obj)
			if round > 0 {
				continue
			}
			if u, err := kubectltest.AsKubectlHoldsIt(obj); err == nil {
				checkList(t, gvk.String()+" as unstructured", u)
			}
			all = append(all, obj)
		}
	}
	checkList(t, "the first round in one list", all...)
	if kinds < 700 {
		t.Fatalf("only %d kinds in the built-in scheme", kinds)
	}
	t.Logf("%d kinds", kinds)
}

// checkList checks that a json list of objs is kubectl's.
func checkList(t *testing.T, what string, objs ...runtime.Object) {
	t.Helper()
	want, wantErr := kubectltest.GetJSON(objs)
	got, err := streamedJSON(objs)
	switch {
	case wantErr != nil && err == nil:
		t.Errorf("%s: kubectl cannot print it (%v), regctl does:\n%s", what, wantErr, got)
	case wantErr == nil && err != nil:
		t.Errorf("%s: regctl cannot print it: %v", what, err)
	case got != want:
		t.Errorf("%s:\n%s", what, kubectltest.FirstDifference(got, want))
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
