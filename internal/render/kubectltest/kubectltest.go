// Package kubectltest is what kubectl itself prints, for the tests of
// regctl's printers to compare with: kubectl get's path from the server's
// JSON to its JSON printer, and objects of every built-in kind filled at
// random.
package kubectltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	jsonserializer "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/cli-runtime/pkg/printers"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	apiregistrationv1beta1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1beta1"
	"sigs.k8s.io/randfill"
)

// BuiltIn holds every kind of kube-apiserver's chain: client-go's scheme
// (every built-in group) and the kinds of the two servers behind it,
// CustomResourceDefinitions and APIServices.
var BuiltIn = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		apiextensionsv1.AddToScheme, apiextensionsv1beta1.AddToScheme,
		apiregistrationv1.AddToScheme, apiregistrationv1beta1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}()

// serverJSON is the object as kube-apiserver sends it: its JSON serializer's
// encoding.
var serverJSON = jsonserializer.NewSerializerWithOptions(jsonserializer.DefaultMetaFactory, BuiltIn, BuiltIn, jsonserializer.SerializerOptions{})

// AsKubectlHoldsIt is obj as kubectl holds what the server sent: the
// server's JSON read by the unstructured JSON scheme.
func AsKubectlHoldsIt(obj runtime.Object) (*unstructured.Unstructured, error) {
	var sent bytes.Buffer
	if err := serverJSON.Encode(obj, &sent); err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(sent.Bytes()); err != nil {
		return nil, fmt.Errorf("kubectl reading %s: %w", sent.Bytes(), err)
	}
	return u, nil
}

// GetJSON is what `kubectl get -o json` prints of objs: kubectl's
// printGeneric (k8s.io/kubectl/pkg/cmd/get) puts what it read into a v1
// List, reads that back with the unstructured JSON scheme, and prints an
// UnstructuredList of its items with cli-runtime's JSONPrinter.
func GetJSON(objs []runtime.Object) (string, error) {
	list := corev1.List{TypeMeta: metav1.TypeMeta{Kind: "List", APIVersion: "v1"}}
	for _, obj := range objs {
		u, err := AsKubectlHoldsIt(obj)
		if err != nil {
			return "", err
		}
		list.Items = append(list.Items, runtime.RawExtension{Object: u})
	}
	data, err := json.Marshal(list)
	if err != nil {
		return "", err
	}
	converted, err := runtime.Decode(unstructured.UnstructuredJSONScheme, data)
	if err != nil {
		return "", err
	}
	items, err := meta.ExtractList(converted)
	if err != nil {
		return "", err
	}
	printed := &unstructured.UnstructuredList{Object: map[string]any{"kind": "List", "apiVersion": "v1", "metadata": map[string]any{}}}
	if lm, err := meta.ListAccessor(converted); err == nil {
		printed.Object["metadata"] = map[string]any{"resourceVersion": lm.GetResourceVersion()}
	}
	for _, item := range items {
		printed.Items = append(printed.Items, *item.(*unstructured.Unstructured))
	}
	var out bytes.Buffer
	if err := (&printers.JSONPrinter{}).PrintObj(printed, &out); err != nil {
		return "", err
	}
	return out.String(), nil
}

// RewrittenRaw are values of raw JSON fields (raw extensions, CRDs'
// defaults and examples), most of which kubectl get prints otherwise than
// they are written: numbers, escapes, a repeated key.
var RewrittenRaw = []string{
	`{"b":[1,{"d":"<x>","c":null}],"a":"` + "\u2028" + `"}`,
	`1.0`, `1e3`, `-0`, `-0.0`, `12345678901234567890`, `0.1`, `1E-7`, `1.50`,
	`"s"`, `true`, `null`, `[]`, `{}`, `{"n":[2.50,3]}`,
	`"\u00e9\/\u003C\ud83d\ude00"`, `{"a":1,"\u0061":2,"a":3}`,
}

// KindFiller fills objects of built-in kinds at random: strings of any
// runes, nil and empty slices and maps, unset pointers, and values that
// are valid where the types cannot hold anything (quantities, raw JSON
// taken from raws).
func KindFiller(seed int64, raws []string) *randfill.Filler {
	rawJSON := func(c randfill.Continue) []byte { return []byte(raws[c.Intn(len(raws))]) }
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
					r.Raw = rawJSON(c)
				}
			},
			func(j *apiextensionsv1.JSON, c randfill.Continue) { j.Raw = rawJSON(c) },
			func(j *apiextensionsv1beta1.JSON, c randfill.Continue) { j.Raw = rawJSON(c) },
			func(f *metav1.FieldsV1, c randfill.Continue) {
				f.Raw = []byte(`{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`)
			},
		}
	})
	// Some kinds nest many levels deep, each level a list of up to three
	// more: a bound on the depth keeps a fill from growing without end.
	return fuzzer.FuzzerFor(funcs, rand.NewSource(seed), serializer.NewCodecFactory(BuiltIn)).NilChance(0.2).NumElements(0, 3).MaxDepth(12)
}

// FirstDifference shows where got and kubectl's want part.
func FirstDifference(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-200)
	return "regctl:  ..." + got[from:min(len(got), i+100)] + "\nkubectl: ..." + want[from:min(len(want), i+100)]
}
