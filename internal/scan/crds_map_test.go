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
