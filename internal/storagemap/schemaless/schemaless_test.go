package schemaless

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// scheme holds the CRD types and their conversions as the apiextensions
// server's scheme does (its install package), without linking the server.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	install.Install(s)
	return s
}()

// realCRDs are the CRDs of real projects the benchmarks use, as their
// projects publish them: large schemas, CEL rules, several versions,
// descriptions full of escapes.
func realCRDs(t *testing.T) []*apiextensions.CustomResourceDefinition {
	t.Helper()
	files, err := filepath.Glob("../../../bench/testdata/crds/*/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in bench/testdata/crds: %v", err)
	}
	var out []*apiextensions.CustomResourceDefinition
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := r.Read()
			if err != nil {
				break
			}
			v1 := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.Unmarshal(doc, v1); err != nil || v1.Name == "" {
				continue
			}
			crd := &apiextensions.CustomResourceDefinition{}
			if err := scheme.Convert(v1, crd, nil); err != nil {
				t.Fatal(err)
			}
			out = append(out, crd)
		}
	}
	return out
}

// TestStripDecodesWhatTheCodecDoesLessTheSchemas holds the
// shortcut the map reads CRDs through to the server's codec: each real CRD,
// stored as the apiextensions server stores it (v1beta1) and as v1, decodes
// from Strip to what the full value decodes to, schemas aside, and
// the schemas are most of the bytes.
func TestStripDecodesWhatTheCodecDoesLessTheSchemas(t *testing.T) {
	codecs := serializer.NewCodecFactory(scheme)
	decoder := codecs.UniversalDecoder(apiextensions.SchemeGroupVersion)
	for _, crd := range realCRDs(t) {
		for _, gv := range []schema.GroupVersion{apiextensionsv1beta1.SchemeGroupVersion, apiextensionsv1.SchemeGroupVersion} {
			data, err := runtime.Encode(codecs.LegacyCodec(gv), crd)
			if err != nil {
				t.Fatal(err)
			}
			stripped, ok := Strip(data)
			if !ok {
				t.Fatalf("%s in %v: Strip found no schema", crd.Name, gv)
			}
			if len(stripped) > len(data)/2 {
				t.Errorf("%s in %v: %d bytes without schemas of %d", crd.Name, gv, len(stripped), len(data))
			}
			full, err := runtime.Decode(decoder, data)
			if err != nil {
				t.Fatal(err)
			}
			want := full.(*apiextensions.CustomResourceDefinition)
			want.Spec.Validation = nil
			for i := range want.Spec.Versions {
				want.Spec.Versions[i].Schema = nil
			}
			got, err := runtime.Decode(decoder, stripped)
			if err != nil {
				t.Fatalf("%s in %v: decoding it without schemas: %v", crd.Name, gv, err)
			}
			if !apiequality.Semantic.DeepEqual(got, want) {
				t.Errorf("%s in %v: decodes without schemas to another CRD", crd.Name, gv)
			}
		}
	}
}

// TestStripLeavesWhatItCannotReadToTheCodec checks that values
// that are not a CRD's JSON object pass as they are, for the codec to
// refuse or read.
func TestStripLeavesWhatItCannotReadToTheCodec(t *testing.T) {
	for _, data := range []string{
		``, `not a CRD`, `[1,2]`, `"spec"`, "k8s\x00\x0a\x02",
		`{"spec":{"versions":[{"schema":{}}]}`, // cut short
		`{"spec":{"versions":[{"schema":{"a":"\"}"}}]}`,
		`{"kind":"CustomResourceDefinition","spec":{"group":"x"}}`, // nothing to leave out
	} {
		if out, ok := Strip([]byte(data)); ok {
			t.Errorf("Strip(%q) = %q, want the value left as it is", data, out)
		}
	}
	in := `{ "spec" : { "validation" : {"openAPIV3Schema":{"description":"a \"}\" b \\","pattern":"\\\"]"}} , "versions" : [ {"name":"v1","schema":[1,{"x":"]"}]} , {"name":"v2"} ] } , "status":{"x":true} }`
	want := `{ "spec" : { "validation" : null , "versions" : [ {"name":"v1","schema":null} , {"name":"v2"} ] } , "status":{"x":true} }`
	if out, ok := Strip([]byte(in)); !ok || string(out) != want {
		t.Errorf("Strip(%s) = %s, %v; want %s", in, out, ok, want)
	}
}

// FuzzStripAgreesWithAJSONDecode holds the byte-level walk to
// what encoding/json reads: whatever it returns decodes as the input
// decodes with its schemas null (keys written with escapes included). It
// never panics. That it cuts every real CRD is the test above's.
func FuzzStripAgreesWithAJSONDecode(f *testing.F) {
	for _, seed := range []string{
		`{"spec":{"validation":{"openAPIV3Schema":{}},"versions":[{"name":"v1","schema":{"a":[1,"]"]}},{"name":"v2"}]}}`,
		`{ "spec" : { "versions" : [ {"schema":{"x":"\"}"}} ] } , "status":{"x":true} }`,
		`{"kind":"CustomResourceDefinition","spec":{"group":"x"}}`,
		`{"spec":{"validation":{},"versions":[{"sch\u0065ma":{}}]}}`,
		`{"spec":{"versions":[1,{"schema":{}}]}}`,
		`{"spec":{"validation":1},"spec":{"versions":[{"schema":2}]}}`,
		`[{"spec":{}}]`, `{"spec":{"versions":[{"schema":{}}]}`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, ok := Strip(data)
		var in any
		if json.Unmarshal(data, &in) != nil {
			return // the codec refuses it, cut or not
		}
		if !ok {
			return // left to the codec as it is
		}
		want := nulledSchemas(in)
		var got any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("Strip(%s) = %s, not JSON: %v", data, out, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Strip(%s) = %s, decodes to\n%v\nwant\n%v", data, out, got, want)
		}
	})
}

// nulledSchemas is a decoded CRD with null for its schemas, as
// Strip leaves them: spec.validation, and each version's schema.
func nulledSchemas(in any) any {
	obj, _ := in.(map[string]any)
	spec, _ := obj["spec"].(map[string]any)
	if _, ok := spec["validation"]; ok {
		spec["validation"] = nil
	}
	versions, _ := spec["versions"].([]any)
	for _, v := range versions {
		if m, ok := v.(map[string]any); ok {
			if _, ok := m["schema"]; ok {
				m["schema"] = nil
			}
		}
	}
	return in
}
