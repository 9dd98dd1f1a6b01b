package itemjson

import (
	"encoding/json"
	"testing"
)

func FuzzAppendIndentMatchesMarshalIndent(f *testing.F) {
	for _, seed := range []string{
		`{}`, `[]`, `{"a":[],"b":{},"c":[{}],"d":[[]]}`, `"x"`, `3`, `null`,
		`{"q":"say \"hi\" \\ back\\","u":"\u00e9\u2028<>&","n":[1,-2.5e10,true,false,null]}`,
		`{"metadata":{"name":"web","labels":{"app":"web"}},"spec":{"containers":[{"name":"c","ports":[]}]}}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var v any
		if json.Unmarshal([]byte(in), &v) != nil {
			return
		}
		compact, err := json.Marshal(v)
		if err != nil {
			return
		}
		want, _ := json.MarshalIndent(v, "    ", "  ")
		if got := appendIndent(nil, compact, "    ", "  "); string(got) != string(want) {
			t.Fatalf("appendIndent(%s)\n got %s\nwant %s", compact, got, want)
		}
	})
}
