package buildinfo

import (
	"encoding/json"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"go.etcd.io/etcd/server/v3/storage/datadir"
)

var semver = regexp.MustCompile(`^v\d+\.\d+\.\d+`)

func TestEtcdVersionFromTestBinary(t *testing.T) {
	if v := EtcdVersion(); !semver.MatchString(v) {
		t.Errorf("EtcdVersion() = %q, want a module version like v3.6.8", v)
	}
}

func TestModuleVersionUnknown(t *testing.T) {
	if v := ModuleVersion("example.com/not/a/dependency", datadir.ToBackendFileName); v != "unknown" {
		t.Errorf("ModuleVersion of a module the function is not from = %q, want unknown", v)
	}
}

func TestReadPrefersLinkerFlags(t *testing.T) {
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "v1.2.3", "0123456789abcdef"

	got := Read("v1.36.3")
	want := Info{
		Version:           "v1.2.3",
		Commit:            "0123456789abcdef",
		GoVersion:         runtime.Version(),
		Platform:          runtime.GOOS + "/" + runtime.GOARCH,
		KubernetesVersion: "v1.36.3",
		EtcdVersion:       EtcdVersion(),
	}
	if got != want {
		t.Errorf("Read() = %+v, want %+v", got, want)
	}
}

func TestReadFallsBack(t *testing.T) {
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "", ""

	got := Read("v1.36.3")
	// A test binary has no module version and, built with -buildvcs=false
	// or outside a checkout, no revision either.
	if got.Version == "" || got.Commit == "" {
		t.Errorf("Read() = %+v: want placeholders, not empty fields", got)
	}
}

func TestFieldsFollowJSON(t *testing.T) {
	info := Info{Version: "a", Commit: "b", GoVersion: "c", Platform: "d", KubernetesVersion: "e", EtcdVersion: "f"}
	data, err := json.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	var fromFields []string
	for _, f := range info.Fields() {
		fromFields = append(fromFields, fmt.Sprintf("%q:%q", f[0], f[1]))
	}
	if want := "{" + strings.Join(fromFields, ",") + "}"; string(data) != want {
		t.Errorf("json %s, fields %s: text and json output must show the same keys in the same order", data, want)
	}
}

// TestASourceTreeBuildSaysItsTree: a build from a Kubernetes tree
// (releases/source sets these at link time) names the tree, its commit
// and changes, in data and in text; a release build says nothing of it.
func TestASourceTreeBuildSaysItsTree(t *testing.T) {
	if FromSource() != nil || Read("v1.37.2").KubernetesSource != nil {
		t.Fatal("a release build says it is from a source tree")
	}
	defer func(a, b, c, d, e, f string) {
		sourceTree, sourceCommit, sourceDirty, sourceVersion, sourceDescribe, sourceBase = a, b, c, d, e, f
	}(sourceTree, sourceCommit, sourceDirty, sourceVersion, sourceDescribe, sourceBase)
	sourceTree, sourceCommit, sourceDirty, sourceVersion, sourceDescribe, sourceBase = "/src/kubernetes", "4f1c2e0", "true", "v1.37.2", "v1.37.2-3-g4f1c2e0-dirty", "1.37"

	want := Source{Tree: "/src/kubernetes", Commit: "4f1c2e0", Dirty: true, Describe: "v1.37.2-3-g4f1c2e0-dirty", Version: "v1.37.2", Release: "1.37"}
	if got := Read("v1.37.2").KubernetesSource; got == nil || *got != want {
		t.Errorf("KubernetesSource = %+v, want %+v", got, want)
	}
	var text []string
	for _, f := range Read("v1.37.2").Fields() {
		text = append(text, f[0]+"="+f[1])
	}
	if got := strings.Join(text[6:], " "); got != "kubernetesSource=/src/kubernetes kubernetesCommit=4f1c2e0 (with changes) kubernetesDescribe=v1.37.2-3-g4f1c2e0-dirty builtAs=Kubernetes 1.37 (pins and drift files)" {
		t.Errorf("text fields after the release's: %s", got)
	}
}
