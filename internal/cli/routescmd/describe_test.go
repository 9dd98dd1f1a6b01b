package routescmd

import (
	"reflect"
	"testing"

	"github.com/regctl/regctl/internal/cli/clitest"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/storagemap/wiring"
)

func TestDescribeFlags(t *testing.T) {
	o, err := clitest.Parse(t, NewDescribe, 0, "pods", "events", "-o", "yaml")
	if err != nil || !reflect.DeepEqual(o.Paths, []string{"pods", "events"}) || o.Output != render.YAML {
		t.Fatalf("%+v, %v", o, err)
	}
	clitest.Refused(t, NewDescribe, 0, "requires at least 1 arg")
	clitest.Refused(t, NewDescribe, 0, "unknown output format", "pods", "-o", "wide")
	clitest.Refused(t, NewDescribe, 5, "`--revision` is for get", "pods")
}

// TestADescribedPathPrintsItsParts: the text is the wiring's parts, one
// section each, titles and rows as they are.
func TestADescribedPathPrintsItsParts(t *testing.T) {
	p := wiring.Path{Path: "events", Steps: []wiring.Step{
		{Step: "path", Decisions: []wiring.Decision{{Name: "kind", Value: "Event"}}},
		{Step: "decorator", Decisions: []wiring.Decision{{Name: "decorator", Value: "undecorated", Code: "k8s.io/apiserver/pkg/registry/generic.UndecoratedStorage", At: "staging/src/k8s.io/apiserver/pkg/registry/generic/storage_decorator.go:42"}}},
	}}
	got := describedPath{p}.Sections(false)
	want := []render.Section{
		{Title: "Path: events", Rows: [][]string{{"  kind:", "Event"}}},
		{Title: "decorator:", Rows: [][]string{{"  decorator:", "undecorated"}, {"", "k8s.io/apiserver/pkg/registry/generic.UndecoratedStorage (staging/src/k8s.io/apiserver/pkg/registry/generic/storage_decorator.go:42)"}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sections %+v\nwant %+v", got, want)
	}
}
