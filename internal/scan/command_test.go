package scan

import (
	"strings"
	"testing"
	"time"
)

func TestScanProgressLine(t *testing.T) {
	got := progressLine(Progress{Keys: 30000, Bytes: 30 << 20, Total: 150000, Elapsed: 3 * time.Second})
	if want := "30000/150000 keys, 30.0 MiB, 10000/s, 12s left"; got != want {
		t.Errorf("progress %q, want %q", got, want)
	}
}

// TestRequestValidate checks scan's flags without an etcd.
func TestRequestValidate(t *testing.T) {
	ok := Request{ChunkSize: DefaultPageSize}
	for _, c := range []struct {
		name string
		r    Request
		want string
	}{
		{"defaults", ok, ""},
		{"every section", Request{Only: Sections, FailOn: FindingKinds, By: "namespace", ChunkSize: 1}, ""},
		{"unknown section", Request{Only: []string{"size", "sizes"}, ChunkSize: 1}, `unknown --only value "sizes": valid values are size,encoding,encryption,versions,corrupt,orphans`},
		{"a section with no findings", Request{FailOn: []string{"size"}, ChunkSize: 1}, `unknown --fail-on value "size": valid values are encryption,versions,corrupt,orphans`},
		{"unknown split", Request{By: "node", ChunkSize: 1}, `unknown --by "node": the one value is namespace`},
		{"no pages", Request{}, ""},
		{"negative pages", Request{ChunkSize: -1}, "`--chunk-size` must be 0 (no paging) or more, not -1"},
		{"--only first", Request{Only: []string{"x"}, FailOn: []string{"y"}, By: "z"}, `unknown --only value "x"`},
	} {
		err := c.r.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
