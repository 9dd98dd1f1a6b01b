package scan

import (
	"slices"
	"testing"
)

func TestVerdicts(t *testing.T) {
	for _, c := range []struct {
		name      string
		v         StoredVersions
		custom    bool
		inUse     []string
		droppable []string
		verdict   string
	}{
		{"all current", StoredVersions{Counts: map[string]int64{"apps/v1": 3}, Writes: "apps/v1"}, false,
			[]string{"apps/v1"}, nil, "all at apps/v1"},
		{"old objects", StoredVersions{Counts: map[string]int64{"example.com/v1": 1, "example.com/v1beta1": 2}, Writes: "example.com/v1", CRDStoredVersions: []string{"v1beta1", "v1"}}, true,
			[]string{"example.com/v1", "example.com/v1beta1"}, nil, "2 at example.com/v1beta1: rewrite them (storage version migration) before the server stops reading them"},
		{"migrated", StoredVersions{Counts: map[string]int64{"example.com/v1": 3}, Writes: "example.com/v1", CRDStoredVersions: []string{"v1beta1", "v1"}}, true,
			[]string{"example.com/v1"}, []string{"v1beta1"}, "all at example.com/v1; v1beta1 can be dropped from status.storedVersions"},
		{"empty", StoredVersions{Counts: map[string]int64{}, Writes: "v1"}, false, nil, nil, "no values"},
		// A built-in value stored at a more mature version than this
		// release writes is a newer server's, not one to rewrite.
		{"newer", StoredVersions{Counts: map[string]int64{"admissionregistration.k8s.io/v1": 2, "admissionregistration.k8s.io/v1beta1": 1}, Writes: "admissionregistration.k8s.io/v1beta1"}, false,
			[]string{"admissionregistration.k8s.io/v1", "admissionregistration.k8s.io/v1beta1"}, nil,
			"2 at admissionregistration.k8s.io/v1, newer than the admissionregistration.k8s.io/v1beta1 this release writes: written by a newer kube-apiserver? read and write them with the regctl of its release"},
		// A custom resource's storage version is its CRD's choice: a
		// move back to v1 leaves v2 values old, not newer.
		{"crd moved back", StoredVersions{Counts: map[string]int64{"example.com/v2": 1}, Writes: "example.com/v1", CRDStoredVersions: []string{"v1", "v2"}}, true,
			[]string{"example.com/v2"}, nil, "1 at example.com/v2: rewrite them (storage version migration) before the server stops reading them"},
		{"missing from storedVersions", StoredVersions{Counts: map[string]int64{"example.com/v1": 1, "example.com/v1alpha1": 4}, Writes: "example.com/v1", CRDStoredVersions: []string{"v1"}}, true,
			[]string{"example.com/v1", "example.com/v1alpha1"}, nil,
			"example.com/v1alpha1 in use but not in status.storedVersions, so nothing stops its removal from the CRD, which would lose those objects: rewrite them (storage version migration)"},
		// Values it could not read may be at any version: nothing can be
		// dropped, and the verdict says it cannot tell.
		{"unread", StoredVersions{Counts: map[string]int64{"example.com/v1": 3}, Writes: "example.com/v1", CRDStoredVersions: []string{"v1beta1", "v1"}, Unread: 2}, true,
			[]string{"example.com/v1"}, nil, "cannot tell: 2 values could not be read (`--only encryption,corrupt` lists them); of the rest, 3 at example.com/v1"},
		{"all unread", StoredVersions{Counts: map[string]int64{}, Writes: "v1", Unread: 460}, false,
			nil, nil, "cannot tell: 460 values could not be read (`--only encryption,corrupt` lists them)"},
	} {
		c.v.settle(c.custom)
		if !slices.Equal(c.v.InUse, c.inUse) || !slices.Equal(c.v.Droppable, c.droppable) || c.v.Verdict != c.verdict {
			t.Errorf("%s: in use %v, droppable %v, %q; want %v, %v, %q", c.name, c.v.InUse, c.v.Droppable, c.v.Verdict, c.inUse, c.droppable, c.verdict)
		}
	}
}

// A gate never passes on values it could not read.
func TestFailedCountsWhatItCouldNotRead(t *testing.T) {
	r := &Report{
		FindingCounts: map[string]int64{Versions: 0, Encryption: 0},
		Resources: []Resource{
			{Resource: "secrets", Versions: &StoredVersions{Unread: 460}, Encryption: &Encryptions{Unreadable: 460}},
			{Resource: "configmaps", Versions: &StoredVersions{Counts: map[string]int64{"v1": 5}}, Encryption: &Encryptions{}},
		},
	}
	got := r.Failed([]string{Versions, Encryption})
	want := []string{"460 values it could not read, so cannot tell their versions", "460 values it could not read, so cannot tell their encryption"}
	if !slices.Equal(got, want) {
		t.Errorf("Failed = %q, want %q", got, want)
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
