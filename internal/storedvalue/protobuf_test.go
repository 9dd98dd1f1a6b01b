package storedvalue

import (
	"reflect"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	// The built-in groups in legacyscheme, as the server's providers
	// install them in regctl.
	_ "k8s.io/kubernetes/pkg/apis/core/install"
)

// paths are the paths of fields.
func paths(fields []Field) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.Path
	}
	return out
}

// withField appends an unknown field to an encoded message.
func withField(b []byte, number protowire.Number) []byte {
	return protowire.AppendString(protowire.AppendTag(b, number, protowire.BytesType), "x")
}

func TestUnknownProtobufFieldsAreNamedByPath(t *testing.T) {
	container := corev1.Container{Name: "app", Image: "nginx"}
	containerBytes, err := container.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	spec := corev1.PodSpec{}
	specBytes, err := spec.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	// spec (2) with a container (2) that has field 77, and field 99 at the top.
	specBytes = protowire.AppendBytes(protowire.AppendTag(specBytes, 2, protowire.BytesType), withField(containerBytes, 77))
	pod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"a": "b"}}}
	podBytes, err := pod.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	podBytes = protowire.AppendBytes(protowire.AppendTag(podBytes, 2, protowire.BytesType), specBytes)
	podBytes = withField(podBytes, 99)

	got, err := unknownFields(podBytes, messageOf(reflect.TypeOf(corev1.Pod{})), 5)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"spec.containers.#77", "#99"}; !slices.Equal(paths(got), want) {
		t.Errorf("unknown fields %v, want %v", got, want)
	}
	clean, err := pod.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := unknownFields(clean, messageOf(reflect.TypeOf(corev1.Pod{})), 5); err != nil || len(got) != 0 {
		t.Errorf("a pod as its type encodes it: %v, %v", got, err)
	}
	if _, err := unknownFields(podBytes[:len(podBytes)-1], messageOf(reflect.TypeOf(corev1.Pod{})), 5); err == nil {
		t.Error("a cut value walked without an error")
	}
}

func TestTypesThatHoldThemselvesAndMapsOfMessages(t *testing.T) {
	props := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"spec": {Type: "string"},
	}}
	data, err := props.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	m := messageOf(reflect.TypeOf(apiextensionsv1.JSONSchemaProps{}))
	if got, err := unknownFields(data, m, 5); err != nil || len(got) != 0 {
		t.Errorf("schema props as encoded: %v, %v", got, err)
	}
	// An unknown field inside a map value is found under the map's name.
	inner, err := (&apiextensionsv1.JSONSchemaProps{Type: "string"}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	entry := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "extra")
	entry = protowire.AppendBytes(protowire.AppendTag(entry, 2, protowire.BytesType), withField(inner, 88))
	var found bool
	for n, f := range m.fields {
		if f.name == "properties" && f.isMap {
			found = true
			data = protowire.AppendBytes(protowire.AppendTag(data, protowire.Number(n), protowire.BytesType), entry)
		}
	}
	if !found {
		t.Fatal("properties is not read as a map")
	}
	if got, err := unknownFields(data, m, 5); err != nil || !slices.Equal(paths(got), []string{"properties[].#88"}) {
		t.Errorf("unknown fields %v, %v", got, err)
	}
}

// A field past the last number its message declares was added by a newer
// release; one in a gap below it was removed by this one (ObjectMeta's 15,
// clusterName) or added by another.
func TestUnknownFieldsSayWhetherANewerReleaseAddedThem(t *testing.T) {
	meta := metav1.ObjectMeta{Name: "web"}
	metaBytes, err := meta.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	pod := corev1.Pod{}
	podBytes, err := pod.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	podBytes = protowire.AppendBytes(protowire.AppendTag(podBytes, 1, protowire.BytesType), withField(metaBytes, 15))
	podBytes = withField(podBytes, 4)
	got, err := unknownFields(podBytes, messageOf(reflect.TypeOf(corev1.Pod{})), 5)
	if err != nil {
		t.Fatal(err)
	}
	want := []Field{{Path: "metadata.#15", Number: 15}, {Path: "#4", Number: 4, Newer: true}}
	if !slices.Equal(got, want) {
		t.Errorf("unknown fields %+v, want %+v", got, want)
	}
}

func TestNewerOrdersVersionsAsKubernetesDoes(t *testing.T) {
	for _, c := range []struct {
		stored, writes string
		newer          bool
	}{
		{"admissionregistration.k8s.io/v1", "admissionregistration.k8s.io/v1beta1", true},
		{"resource.k8s.io/v1beta2", "resource.k8s.io/v1alpha3", true},
		{"resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1", true},
		{"autoscaling/v2", "autoscaling/v1", true},
		{"storage.k8s.io/v1beta1", "storage.k8s.io/v1", false},
		{"v1", "v1", false},
		// Another group is another kind's, never a newer version.
		{"apps/v1", "extensions/v1beta1", false},
	} {
		if got := Newer(c.stored, c.writes); got != c.newer {
			t.Errorf("Newer(%s, %s) = %v, want %v", c.stored, c.writes, got, c.newer)
		}
	}
}

// TestKindsOfEveryServerOfTheChainAreWalked stores, as the apiserver's
// protobuf serializer wraps a value, one kind of each server of
// kube-apiserver's chain with a field its type does not declare: each is
// walked by its type. A kind no scheme holds is not walked.
func TestKindsOfEveryServerOfTheChainAreWalked(t *testing.T) {
	stored := func(apiVersion, kind string, raw []byte) []byte {
		t.Helper()
		u := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: apiVersion, Kind: kind}, Raw: withField(raw, 999)}
		data, err := u.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return append([]byte("k8s\x00"), data...)
	}
	marshal := func(m interface{ Marshal() ([]byte, error) }) []byte {
		t.Helper()
		b, err := m.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	meta := metav1.ObjectMeta{Name: "x"}
	for _, c := range []struct {
		apiVersion, kind string
		raw              []byte
	}{
		{"v1", "Pod", marshal(&corev1.Pod{ObjectMeta: meta})},
		{"apiextensions.k8s.io/v1beta1", "CustomResourceDefinition", marshal(&apiextensionsv1beta1.CustomResourceDefinition{ObjectMeta: meta})},
		{"apiextensions.k8s.io/v1", "CustomResourceDefinition", marshal(&apiextensionsv1.CustomResourceDefinition{ObjectMeta: meta})},
		{"apiregistration.k8s.io/v1", "APIService", marshal(&apiregistrationv1.APIService{ObjectMeta: meta})},
	} {
		gvk, fields, err := ProtobufFields(stored(c.apiVersion, c.kind, c.raw), 5)
		if err != nil {
			t.Fatalf("%s %s: %v", c.apiVersion, c.kind, err)
		}
		if gvk.Kind != c.kind || gvk.GroupVersion().String() != c.apiVersion {
			t.Errorf("%s %s read as %v", c.apiVersion, c.kind, gvk)
		}
		if want := []string{"#999"}; !slices.Equal(paths(fields), want) {
			t.Errorf("%s %s: unknown fields %v, want %v", c.apiVersion, c.kind, paths(fields), want)
		}
	}
	if _, fields, err := ProtobufFields(stored("example.com/v1", "Widget", nil), 5); err != nil || fields != nil {
		t.Errorf("a kind no scheme holds: %v, %v", fields, err)
	}
}
