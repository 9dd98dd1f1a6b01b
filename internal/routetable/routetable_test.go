package routetable

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func sample() RouteTable {
	return RouteTable{
		FormatVersion:     FormatVersion,
		KubernetesVersion: "v1.36.3",
		EmulatedVersion:   "1.36",
		FeatureGates:      map[string]bool{"AllAlpha": true},
		EtcdPrefix:        "/registry",
		Routes: []Route{
			{
				Path: "componentstatuses", Resource: "componentstatuses", Version: "v1", Kind: "ComponentStatus",
				Scope: "Cluster", Verbs: []string{"get", "list"}, ShortNames: []string{"cs"},
				Storage: "*componentstatus.REST", Store: StoreNone, Decorator: "none",
			},
			{
				Path: "pods", Resource: "pods", Version: "v1", Kind: "Pod", Scope: "Namespaced",
				Verbs: []string{"create", "get", "list"}, ShortNames: []string{"po"}, Categories: []string{"all"},
				Storage: "*storage.REST", Store: StoreOwn, KeyPrefix: "/registry/pods/", Decorator: "cacher",
				StorageVersion: "v1", StorageVersionHash: "xPOwRZ+Yhw8=", MediaType: "application/vnd.kubernetes.protobuf",
				Encryption: "identity",
			},
			{
				Path: "pods/status", Resource: "pods", Subresource: "status", Version: "v1", Kind: "Pod",
				Scope: "Namespaced", Verbs: []string{"get", "patch", "update"}, Storage: "*storage.StatusREST",
				Store: StoreShared, SharesWith: "pods", KeyPrefix: "/registry/pods/", Decorator: "cacher",
				StorageVersion: "v1", MediaType: "application/vnd.kubernetes.protobuf", Encryption: "identity",
				EtcdServers: []string{"http://etcd-a:2379", "http://etcd-b:2379"},
			},
		},
	}
}

func load(t *testing.T, doc string) RouteTable {
	t.Helper()
	tab, err := Load(strings.NewReader(doc), "table.yaml")
	if err != nil {
		t.Fatalf("loading:\n%s\nerror: %v", doc, err)
	}
	return tab
}

func marshal(t *testing.T, v any, asJSON bool) string {
	t.Helper()
	var b []byte
	var err error
	if asJSON {
		b, err = json.MarshalIndent(v, "", "  ")
	} else {
		b, err = yaml.Marshal(v)
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLoadRoundTrip(t *testing.T) {
	want := sample()
	for _, asJSON := range []bool{false, true} {
		got := load(t, marshal(t, want, asJSON))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("json=%v: loaded %+v, want %+v", asJSON, got, want)
		}
	}
}

func TestYAMLAndJSONInAnyOrderCompareEqual(t *testing.T) {
	a := sample()
	yamlDoc := marshal(t, a, false)

	// The same table as json, with routes and keys in another order.
	var generic map[string]any
	if err := json.Unmarshal([]byte(marshal(t, a, true)), &generic); err != nil {
		t.Fatal(err)
	}
	routes := generic["routes"].([]any)
	slices.Reverse(routes)
	var b strings.Builder
	b.WriteString("{\n")
	keys := []string{"routes", "featureGates", "kubernetesVersion", "formatVersion", "emulatedVersion", "etcdPrefix"}
	for i, k := range keys {
		v, _ := json.Marshal(generic[k])
		b.WriteString("  " + `"` + k + `": ` + string(v))
		if i < len(keys)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("}\n")
	jsonDoc := b.String()
	if strings.Index(jsonDoc, `"componentstatuses"`) < strings.Index(jsonDoc, `"pods/status"`) {
		t.Fatal("the json fixture is not reordered")
	}

	res := Compare(load(t, yamlDoc), load(t, jsonDoc), Filter{})
	if !res.Equal || !res.Empty() {
		t.Errorf("yaml and reordered json of one table differ: %+v", res)
	}
}

func TestMissingAndEmptyListsAreEqual(t *testing.T) {
	a := sample()
	b := sample()
	a.Routes[2].ShortNames, b.Routes[2].ShortNames = nil, []string{}
	a.Routes[2].Categories, b.Routes[2].Categories = []string{}, nil
	if res := Compare(a, b, Filter{}); !res.Empty() {
		t.Errorf("nil and empty lists compare different: %+v", res)
	}
}

func TestLoadErrors(t *testing.T) {
	valid := marshal(t, sample(), true)
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"empty", "", "reading table.yaml: it is empty, not a route table"},
		{"blank", "\n  \n", "reading table.yaml: it is empty, not a route table"},
		{"random yaml", "foo: bar\nbaz: [1, 2]\n", `reading table.yaml: not a route table: it has no "routes"`},
		{"yaml list", "- a\n- b\n", "reading table.yaml: not a route table: "},
		{"yaml scalar", "hello\n", "reading table.yaml: not a route table: "},
		{"truncated json", valid[:len(valid)/2], "reading table.yaml: not a route table: "},
		{"no format version", "kubernetesVersion: v1.36.3\netcdPrefix: /registry\nroutes: []\n", `reading table.yaml: not a route table: it has no "formatVersion"`},
		{"newer format version", "formatVersion: 4\nroutes: []\nsomethingNew: true\n", "reading table.yaml: the table was written by a newer regctl (format version 4, this regctl reads up to 3): upgrade regctl"},
		{"zero format version", "formatVersion: 0\nroutes: []\n", "reading table.yaml: formatVersion 0 is not a route table format version"},
		{"text format version", "formatVersion: one\nroutes: []\n", `reading table.yaml: formatVersion "one" is not a route table format version`},
		{"unknown table field", "formatVersion: 1\nroutes: []\nextra: 1\n", `unknown field "extra"`},
		{"unknown route field", "formatVersion: 1\nroutes:\n- path: pods\n  colour: blue\n", `unknown field "routes[0].colour"`},
		{"duplicate key", "formatVersion: 1\nroutes: []\nroutes: []\n", `reading table.yaml: `},
		{"duplicate json key", `{"formatVersion": 1, "routes": [{"path": "pods", "path": "services"}]}`, `duplicate field "routes[0].path"`},
		{"unknown json field", `{"formatVersion": 1, "routes": [{"path": "pods", "Scope": "Cluster"}]}`, `unknown field "routes[0].Scope"`},
		{"route without path", "formatVersion: 1\nroutes:\n- resource: pods\n", "reading table.yaml: a route has no path"},
		{"duplicate path", "formatVersion: 1\nroutes:\n- path: pods\n- path: pods\n", `reading table.yaml: path "pods" is listed twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(strings.NewReader(tc.doc), "table.yaml")
			if err == nil {
				t.Fatalf("loaded %q without error", tc.doc)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "reading table.yaml: ") {
				t.Errorf("error %q does not name the input", err)
			}
		})
	}
}

func TestLoadAcceptsAnEmptyTable(t *testing.T) {
	tab := load(t, "formatVersion: 1\nroutes: []\n")
	if len(tab.Routes) != 0 {
		t.Errorf("routes %v, want none", tab.Routes)
	}
}

// TestFieldsAreTheDocumentKeys pins Fields to what `routes -o json` writes:
// every key but formatVersion, routes and a route's path.
func TestFieldsAreTheDocumentKeys(t *testing.T) {
	var full Route
	v := reflect.ValueOf(&full).Elem()
	for _, f := range append(routeFields, field{index: []int{0}}) {
		v.FieldByIndex(f.index).Set(changed(t, v.FieldByIndex(f.index)))
	}
	tab := sample()
	tab.Routes = []Route{full}

	var keys []string
	var doc map[string]any
	if err := json.Unmarshal([]byte(marshal(t, tab, true)), &doc); err != nil {
		t.Fatal(err)
	}
	for k := range doc {
		if k != "formatVersion" && k != "routes" {
			keys = append(keys, k)
		}
	}
	for k := range doc["routes"].([]any)[0].(map[string]any) {
		if k != "path" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	got := slices.Sorted(slices.Values(Fields()))
	if !slices.Equal(got, keys) {
		t.Errorf("Fields() = %v, want the document's keys %v", got, keys)
	}
	if f := Fields(); f[0] != "kubernetesVersion" || f[3] != "etcdPrefix" || f[4] != "resource" {
		t.Errorf("Fields() = %v: want table fields first, then route fields in declaration order", f)
	}
}

// changed returns a copy of v with a different value of the same type.
func changed(t *testing.T, v reflect.Value) reflect.Value {
	t.Helper()
	out := reflect.New(v.Type()).Elem()
	switch v.Kind() {
	case reflect.String:
		out.SetString(v.String() + "-changed")
	case reflect.Slice:
		out.Set(reflect.Append(reflect.AppendSlice(reflect.MakeSlice(v.Type(), 0, v.Len()+1), v), reflect.ValueOf("changed")))
	case reflect.Int:
		out.SetInt(v.Int() + 1)
	case reflect.Bool:
		out.SetBool(!v.Bool())
	case reflect.Map:
		out.Set(reflect.MakeMap(v.Type()))
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(it.Key(), it.Value())
		}
		elem := reflect.ValueOf(true)
		if v.Type().Elem().Kind() == reflect.String {
			elem = reflect.ValueOf("changed")
		}
		out.SetMapIndex(reflect.ValueOf("Changed"), elem)
	default:
		t.Fatalf("no way to change a %s field: extend this test", v.Kind())
	}
	return out
}

func TestEveryRouteFieldChange(t *testing.T) {
	for _, rf := range routeFields {
		name := rf.name
		t.Run(name, func(t *testing.T) {
			old, new := sample(), sample()
			f := reflect.ValueOf(&new.Routes[1]).Elem().FieldByIndex(rf.index)
			f.Set(changed(t, f))

			res := Compare(old, new, Filter{})
			if res.Equal {
				t.Fatal("tables compare equal")
			}
			if len(res.Added)+len(res.Removed)+len(res.Table) != 0 || len(res.Changed) != 1 {
				t.Fatalf("result %+v: want exactly one changed route", res)
			}
			rc := res.Changed[0]
			if rc.Path != "pods" || len(rc.Changes) != 1 {
				t.Fatalf("changed %+v: want one change of pods", rc)
			}
			c := rc.Changes[0]
			if c.Field != name || c.Informational {
				t.Errorf("change %+v: want a counted change of %q", c, name)
			}
			if !reflect.DeepEqual(c.Old, normalize(reflect.ValueOf(old.Routes[1]).FieldByIndex(rf.index))) || !reflect.DeepEqual(c.New, normalize(f)) {
				t.Errorf("change %+v: old or new value is not the field's", c)
			}

			ignored, err := NewFilter(nil, []string{name})
			if err != nil {
				t.Fatal(err)
			}
			res = Compare(old, new, ignored)
			if !res.Equal || len(res.Changed) != 1 || !res.Changed[0].Changes[0].Informational {
				t.Errorf("with %q ignored: %+v, want equal with one informational change", name, res)
			}
			if stripped := res.WithoutInformational(); !stripped.Empty() {
				t.Errorf("without informational changes: %+v, want nothing", stripped)
			}
		})
	}
}

func TestEveryTableFieldChange(t *testing.T) {
	for _, f := range tableFields {
		t.Run(f.name, func(t *testing.T) {
			old, new := sample(), sample()
			v := reflect.ValueOf(&new).Elem().FieldByIndex(f.index)
			v.Set(changed(t, v))
			res := Compare(old, new, Filter{})
			if res.Equal || len(res.Table) != 1 || res.Table[0].Field != f.name || len(res.Changed) != 0 {
				t.Errorf("result %+v: want one counted change of %q", res, f.name)
			}
		})
	}
}

func TestFormatVersionIsNotAChange(t *testing.T) {
	old, new := sample(), sample()
	new.FormatVersion = 0
	if res := Compare(old, new, Filter{}); !res.Empty() {
		t.Errorf("result %+v: formatVersion is the document's, not the wiring's", res)
	}
}

func TestAddedAndRemoved(t *testing.T) {
	old, new := sample(), sample()
	added := new.Routes[1]
	added.Path = "pods/ephemeralcontainers"
	new.Routes = append(new.Routes, added)
	new.Routes = slices.Delete(new.Routes, 0, 1) // componentstatuses
	// An added or removed route counts whatever fields are filtered.
	only, err := NewFilter([]string{"keyPrefix"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := Compare(old, new, only)
	if res.Equal {
		t.Error("tables with a route added and one removed compare equal")
	}
	if len(res.Added) != 1 || res.Added[0].Path != "pods/ephemeralcontainers" || !reflect.DeepEqual(res.Added[0], added) {
		t.Errorf("added %+v, want pods/ephemeralcontainers with its record", res.Added)
	}
	if len(res.Removed) != 1 || res.Removed[0].Path != "componentstatuses" {
		t.Errorf("removed %+v, want componentstatuses", res.Removed)
	}
	if len(res.Changed) != 0 {
		t.Errorf("changed %+v, want none", res.Changed)
	}
}

func TestFilter(t *testing.T) {
	f, err := NewFilter([]string{"keyPrefix", "storageVersion", "decorator"}, []string{"decorator"})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"keyPrefix": true, "storageVersion": true, "decorator": false, "verbs": false, "kubernetesVersion": false} {
		if got := f.Counts(name); got != want {
			t.Errorf("Counts(%q) = %v, want %v", name, got, want)
		}
	}
	if !(Filter{}).Counts("verbs") {
		t.Error("the zero Filter does not count verbs")
	}

	old, new := sample(), sample()
	new.Routes[1].KeyPrefix = "/registry/pods2/"
	new.Routes[1].Verbs = []string{"get"}
	new.KubernetesVersion = "v1.37.0"
	ignoreVersion, _ := NewFilter(nil, []string{"kubernetesVersion"})
	res := Compare(old, new, ignoreVersion)
	if res.Equal {
		t.Error("keyPrefix and verbs changed, but tables compare equal")
	}
	if len(res.Table) != 1 || !res.Table[0].Informational {
		t.Errorf("table changes %+v, want kubernetesVersion, informational", res.Table)
	}
	onlyVersion, _ := NewFilter([]string{"storageVersion"}, nil)
	if res := Compare(old, new, onlyVersion); !res.Equal {
		t.Errorf("only storageVersion counts and it did not change, but %+v", res)
	}
}

func TestFilterRejectsUnknownFields(t *testing.T) {
	for _, tc := range []struct {
		only, ignore []string
		want         string
	}{
		{[]string{"keyprefix"}, nil, "unknown field \"keyprefix\" in `--only`: valid fields are kubernetesVersion,emulatedVersion,featureGates,etcdPrefix,resource,"},
		{nil, []string{"decorator", "path"}, "unknown field \"path\" in `--ignore`: valid fields are "},
		{[]string{""}, nil, "unknown field \"\" in `--only`"},
	} {
		_, err := NewFilter(tc.only, tc.ignore)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("NewFilter(%q, %q) error %v, want %q...", tc.only, tc.ignore, err, tc.want)
		}
		if err != nil && !strings.HasSuffix(err.Error(), ",encryption,proxiedTo,provider,constructor,strategies,strategyMethods,funcs,selectableFields,triggers,indexers") {
			t.Errorf("error %q does not list every field", err)
		}
	}
}

func TestWriteText(t *testing.T) {
	old, new := sample(), sample()
	new.EtcdPrefix = "/kube"
	new.FeatureGates = map[string]bool{"B": false, "A": true}
	new.Routes[1].Decorator = "undecorated"
	new.Routes[1].Verbs = []string{"get"}
	new.Routes[2].EtcdServers = nil
	new.Routes = append(new.Routes[1:], Route{Path: "pods/binding"})
	f, _ := NewFilter(nil, []string{"verbs"})
	res := Compare(old, new, f)
	res.Old, res.New = "a.yaml", "live"

	var b strings.Builder
	if err := res.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `--- a.yaml
+++ live
featureGates: -AllAlpha=true +A=true +B=false
etcdPrefix: /registry -> /kube
changed: pods
  verbs: -create -list (informational)
  decorator: cacher -> undecorated
changed: pods/status
  etcdServers: -http://etcd-a:2379 -http://etcd-b:2379
added: pods/binding
removed: componentstatuses
`
	if b.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", b.String(), want)
	}

	b.Reset()
	if err := res.WithoutInformational().WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "verbs") || !strings.Contains(b.String(), "decorator: cacher -> undecorated") {
		t.Errorf("without informational changes:\n%s", b.String())
	}

	b.Reset()
	if err := Compare(old, old, Filter{}).WriteText(&b); err != nil || b.Len() != 0 {
		t.Errorf("equal tables wrote %q, %v; want nothing", b.String(), err)
	}
}

func TestResultJSON(t *testing.T) {
	old, new := sample(), sample()
	new.Routes[1].Decorator = "undecorated"
	out, err := json.Marshal(Compare(old, new, Filter{}))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"old":"","new":"","equal":false,"table":[],"changed":[{"path":"pods","changes":[{"field":"decorator","old":"cacher","new":"undecorated"}]}],"added":[],"removed":[]}`
	if string(out) != want {
		t.Errorf("json %s\nwant %s", out, want)
	}
}
