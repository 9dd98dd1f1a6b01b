package scan

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/storagemap/maptest"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
)

// establishedCRD is the CRD thing<i>s.<group>, established, as the
// apiextensions server stores it: a schema of spec.size alone.
func establishedCRD(i int, group string) string {
	names := fmt.Sprintf(`{"plural": "thing%[1]ds", "singular": "thing%[1]d", "kind": "Thing%[1]d", "listKind": "Thing%[1]dList"}`, i)
	return fmt.Sprintf(`{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
"metadata": {"name": "thing%[1]ds.%[2]s", "uid": "u%[1]d", "creationTimestamp": "2026-01-01T00:00:00Z"},
"spec": {"group": "%[2]s", "scope": "Namespaced", "names": %[3]s,
  "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object",
    "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}}}]},
"status": {"acceptedNames": %[3]s, "storedVersions": ["v1"], "conditions": [
  {"type": "NamesAccepted", "status": "True", "reason": "Test", "lastTransitionTime": "2026-01-01T00:00:00Z"},
  {"type": "Established", "status": "True", "reason": "Test", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}`, i, group, names)
}

// TestScanBuildsTheCRDsOfTheValuesItReads scans custom resources: a scan
// builds a CRD's serving storage when it decodes its first value (it
// checks the value against the CRD's schema, and finds the fields it does
// not declare), and none for the CRDs without objects.
func TestScanBuildsTheCRDsOfTheValuesItReads(t *testing.T) {
	ctx := context.Background()
	s, client := maptest.Open(t)
	crds := s.Map.Handles["customresourcedefinitions.apiextensions.k8s.io"]
	for i, group := range []string{"g1.example", "g2.example", "g3.example", "g1.example"} {
		key, err := crds.Key("", fmt.Sprintf("thing%ds.%s", i, group))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.Put(ctx, key, establishedCRD(i, group)); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.Beside(ctx, storagemap.Config{Options: serverflags.NewOptions(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	for _, path := range []string{"thing0s.g1.example", "thing1s.g2.example", "thing2s.g3.example"} {
		key, err := all.Map.Handles[path].Key("default", "a")
		if err != nil {
			t.Fatal(err)
		}
		plural, group, _ := strings.Cut(path, ".")
		kind := "Thing" + strings.TrimSuffix(strings.TrimPrefix(plural, "thing"), "s")
		value := `{"apiVersion":"` + group + `/v1","kind":"` + kind + `","metadata":{"name":"a","namespace":"default","uid":"u"},"spec":{"size":1,"colour":"red"}}`
		if _, err := client.Put(ctx, key, value); err != nil {
			t.Fatal(err)
		}
	}
	if built := all.Map.BuiltCRDs(); len(built) != 0 {
		t.Fatalf("the map built %v before the scan", built)
	}
	report, err := Run(ctx, keyspace(all, client), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if built := all.Map.BuiltCRDs(); !slices.Equal(built, []string{"thing0s.g1.example", "thing1s.g2.example", "thing2s.g3.example"}) {
		t.Errorf("a scan built %v, want the CRDs with objects, once each, in key order", built)
	}
	unknown := 0
	for _, f := range report.Findings {
		if f.Reason == ReasonUnknownFields && strings.Contains(f.Detail, "colour") {
			unknown++
		}
	}
	if unknown != 3 {
		t.Errorf("the scan found the unknown field in %d custom resources, want 3: %+v", unknown, report.Findings)
	}
}

// versionedCRD is the CRD gizmos.example.com, established, in two
// versions (v1 stored), whose schemas know spec.size alone.
const versionedCRD = `{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
"metadata": {"name": "gizmos.example.com", "uid": "u1", "creationTimestamp": "2026-01-01T00:00:00Z"},
"spec": {"group": "example.com", "scope": "Namespaced",
  "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo", "listKind": "GizmoList"},
  "versions": [
    {"name": "v1alpha1", "served": true, "storage": false, "schema": {"openAPIV3Schema": %[1]s}},
    {"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": %[1]s}}]},
"status": {"acceptedNames": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo", "listKind": "GizmoList"},
  "storedVersions": ["v1alpha1", "v1"], "conditions": [
  {"type": "NamesAccepted", "status": "True", "reason": "Test", "lastTransitionTime": "2026-01-01T00:00:00Z"},
  {"type": "Established", "status": "True", "reason": "Test", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}`

// TestScanReadsCustomResourcesAsTheirStorageDoes scans custom resources
// stored at each version of their CRD and at one it does not have: the
// first are read in the version they are stored at (an old one is an
// old-version finding, a field its schema prunes an unknown one), the
// last is a value the server cannot read, and the versions' verdict says
// it cannot tell.
func TestScanReadsCustomResourcesAsTheirStorageDoes(t *testing.T) {
	ctx := context.Background()
	s, client := maptest.Open(t)
	key, err := s.Map.Handles["customresourcedefinitions.apiextensions.k8s.io"].Key("", "gizmos.example.com")
	if err != nil {
		t.Fatal(err)
	}
	schema := `{"type": "object", "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}`
	if _, err := client.Put(ctx, key, fmt.Sprintf(versionedCRD, schema)); err != nil {
		t.Fatal(err)
	}
	all, err := s.Beside(ctx, storagemap.Config{Options: serverflags.NewOptions(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	for name, version := range map[string]string{"a": "v1alpha1", "b": "v1", "c": "v0"} {
		key, err := all.Map.Handles["gizmos.example.com"].Key("default", name)
		if err != nil {
			t.Fatal(err)
		}
		value := `{"apiVersion":"example.com/` + version + `","kind":"Gizmo","metadata":{"name":"` + name + `","namespace":"default","uid":"u-` + name + `"},"spec":{"size":1,"colour":"red"}}`
		if _, err := client.Put(ctx, key, value); err != nil {
			t.Fatal(err)
		}
	}
	report, err := Run(ctx, keyspace(all, client), Options{Sections: []string{Versions, Corrupt}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range report.Findings {
		if f.Resource == "gizmos.example.com" {
			got = append(got, f.Reason+" "+f.Key+": "+f.Detail)
		}
	}
	want := []string{
		ReasonOldVersion + " /registry/example.com/gizmos/default/a: stored at example.com/v1alpha1; the server writes example.com/v1",
		ReasonUndecodable + " /registry/example.com/gizmos/default/c: the storage codec cannot decode it (application/json): request to convert CR to an invalid group/version: example.com/v0",
		ReasonUnknownFields + " /registry/example.com/gizmos/default/a: fields the example.com/v1alpha1 Gizmo schema does not know: spec.colour; the server prunes them when it reads the value",
		ReasonUnknownFields + " /registry/example.com/gizmos/default/b: fields the example.com/v1 Gizmo schema does not know: spec.colour; the server prunes them when it reads the value",
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, r := range report.Resources {
		if r.Resource != "gizmos.example.com" {
			continue
		}
		if v := r.Versions; v == nil || v.Unread != 1 || v.Counts["example.com/v1alpha1"] != 1 || v.Counts["example.com/v1"] != 1 || !strings.HasPrefix(v.Verdict, "cannot tell") {
			t.Errorf("gizmos' versions: %+v; want one unread, and no verdict", v)
		}
	}
}
