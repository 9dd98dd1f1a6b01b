package gocode

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

func oneLiner() bool { return false }

func multiLine(
	a int,
) int {
	b := a * 2
	return b
}

type inner struct{}

func (inner) Hook() string { return "inner" }

type outer struct {
	inner
	runtime.ObjectTyper
}

// TestDeclaredLines: a function is located at its func keyword, even one
// the compiler gives no prologue; this pins the runtime's record of
// functions that declared reads to the toolchain.
func TestDeclaredLines(t *testing.T) {
	for _, c := range []struct {
		fn   any
		line int
	}{{oneLiner, 10}, {multiLine, 12}} {
		loc := Func(c.fn)
		if !strings.HasSuffix(loc.File, "internal/gocode/gocode_test.go") || loc.Line != c.line {
			t.Errorf("%s at %s, want gocode_test.go:%d", loc.Name, loc.Where(), c.line)
		}
	}
	if named := Named(Func(multiLine).Name); named != Func(multiLine) {
		t.Errorf("by name %+v, by value %+v", named, Func(multiLine))
	}
}

// TestMethodsAreWhereTheyRun: a promoted method is the embedded field's,
// an interface field's the dynamic value's.
func TestMethodsAreWhereTheyRun(t *testing.T) {
	v := outer{ObjectTyper: runtime.NewScheme()}
	if loc, ok := Method(v, "Hook"); !ok || loc.Name != "github.com/regctl/regctl/internal/gocode.inner.Hook" || loc.Line != 21 {
		t.Errorf("Hook: %+v", loc)
	}
	if loc, _ := Method(&v, "ObjectKinds"); loc.Name != "k8s.io/apimachinery/pkg/runtime.(*Scheme).ObjectKinds" || !strings.HasPrefix(loc.File, "staging/src/k8s.io/apimachinery/pkg/runtime/") {
		t.Errorf("ObjectKinds: %+v, want the scheme's, in the Kubernetes tree", loc)
	}
	if Defines(v, "Hook") || !Defines(inner{}, "Hook") {
		t.Error("Defines: want the embedding type not to declare Hook, the embedded one to")
	}
	if _, ok := Method(v, "NoSuch"); ok {
		t.Error("a method v lacks is found")
	}
}

func TestEnclosing(t *testing.T) {
	for in, want := range map[string]string{
		"k8s.io/kubernetes/pkg/registry/core/pod/storage.NewStorage.func1":                  "k8s.io/kubernetes/pkg/registry/core/pod/storage.NewStorage",
		"k8s.io/kubernetes/pkg/registry/core/pod/storage.NewStorage.func1.2":                "k8s.io/kubernetes/pkg/registry/core/pod/storage.NewStorage",
		"k8s.io/apiserver/pkg/registry/generic/registry.(*Store).CompleteWithOptions.func2": "k8s.io/apiserver/pkg/registry/generic/registry.(*Store).CompleteWithOptions",
		"k8s.io/kubernetes/pkg/registry/core/pod.MatchPod":                                  "k8s.io/kubernetes/pkg/registry/core/pod.MatchPod",
	} {
		if got := Enclosing(in); got != want {
			t.Errorf("Enclosing(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestSourceNamesFilesAsInTheKubernetesTree: from the module cache, with
// -trimpath or from a checkout.
func TestSourceNamesFilesAsInTheKubernetesTree(t *testing.T) {
	for in, want := range map[string]string{
		"/home/me/go/pkg/mod/k8s.io/kubernetes@v1.37.2/pkg/registry/core/pod/strategy.go": "pkg/registry/core/pod/strategy.go",
		"k8s.io/kubernetes@v1.37.2/pkg/registry/core/pod/strategy.go":                     "pkg/registry/core/pod/strategy.go",
		"k8s.io/apiserver@v0.0.0/pkg/registry/rest/create.go":                             "staging/src/k8s.io/apiserver/pkg/registry/rest/create.go",
		"/home/me/go/pkg/mod/sigs.k8s.io/json@v0.0.0-2025/json.go":                        "sigs.k8s.io/json@v0.0.0-2025/json.go",
	} {
		if got := Source(in); got != want {
			t.Errorf("Source(%s) = %s, want %s", in, got, want)
		}
	}
	if got := Func(TestEnclosing).File; got != "github.com/regctl/regctl/internal/gocode/gocode_test.go" {
		t.Errorf("regctl's own file named %s", got)
	}
}
