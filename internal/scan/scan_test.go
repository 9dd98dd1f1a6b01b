package scan

import (
	"reflect"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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
	if want := []string{"spec.containers.#77", "#99"}; !slices.Equal(got, want) {
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
			data = protowire.AppendBytes(protowire.AppendTag(data, n, protowire.BytesType), entry)
		}
	}
	if !found {
		t.Fatal("properties is not read as a map")
	}
	if got, err := unknownFields(data, m, 5); err != nil || !slices.Equal(got, []string{"properties[].#88"}) {
		t.Errorf("unknown fields %v, %v", got, err)
	}
}

func TestVerdicts(t *testing.T) {
	for _, c := range []struct {
		name      string
		v         StoredVersions
		inUse     []string
		droppable []string
		verdict   string
	}{
		{"all current", StoredVersions{Counts: map[string]int64{"apps/v1": 3}, Writes: "apps/v1"},
			[]string{"apps/v1"}, nil, "all at apps/v1"},
		{"old objects", StoredVersions{Counts: map[string]int64{"example.com/v1": 1, "example.com/v1beta1": 2}, Writes: "example.com/v1", CRDStoredVersions: []string{"v1beta1", "v1"}},
			[]string{"example.com/v1", "example.com/v1beta1"}, nil, "2 at example.com/v1beta1: rewrite them (storage version migration) before the server stops reading them"},
		{"migrated", StoredVersions{Counts: map[string]int64{"example.com/v1": 3}, Writes: "example.com/v1", CRDStoredVersions: []string{"v1beta1", "v1"}},
			[]string{"example.com/v1"}, []string{"v1beta1"}, "all at example.com/v1; v1beta1 can be dropped from status.storedVersions"},
		{"empty", StoredVersions{Counts: map[string]int64{}, Writes: "v1"}, nil, nil, "no values"},
	} {
		c.v.settle()
		if !slices.Equal(c.v.InUse, c.inUse) || !slices.Equal(c.v.Droppable, c.droppable) || c.v.Verdict != c.verdict {
			t.Errorf("%s: in use %v, droppable %v, %q; want %v, %v, %q", c.name, c.v.InUse, c.v.Droppable, c.v.Verdict, c.inUse, c.droppable, c.verdict)
		}
	}
}

func TestKeepLargest(t *testing.T) {
	var largest []SizedKey
	for i, size := range []int64{5, 9, 1, 9, 7} {
		largest = keepLargest(largest, SizedKey{Key: string(rune('a' + i)), Bytes: size})
	}
	if want := []SizedKey{{"b", 9}, {"d", 9}, {"e", 7}}; !slices.Equal(largest, want) {
		t.Errorf("largest %v, want %v", largest, want)
	}
}

func TestFailedNamesWhatWasFound(t *testing.T) {
	r := &Report{FindingCounts: map[string]int64{Encryption: 10, Orphans: 1, Corrupt: 0}}
	got := r.Failed([]string{Encryption, Corrupt, Orphans})
	want := []string{"10 encryption findings", "1 orphans finding"}
	if !slices.Equal(got, want) {
		t.Errorf("Failed = %q, want %q", got, want)
	}
}

func TestSectionsForOnlyAddsFailOnInReportOrder(t *testing.T) {
	for _, tc := range []struct{ only, failOn, want []string }{
		{nil, []string{Orphans}, nil},
		{[]string{Orphans, Size}, nil, []string{Size, Orphans}},
		{[]string{Size}, []string{Corrupt, Size}, []string{Size, Corrupt}},
	} {
		if got := SectionsFor(tc.only, tc.failOn); !slices.Equal(got, tc.want) {
			t.Errorf("SectionsFor(%v, %v) = %v, want %v", tc.only, tc.failOn, got, tc.want)
		}
	}
}
