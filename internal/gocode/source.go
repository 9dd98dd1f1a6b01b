package gocode

import (
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"sync"

	"k8s.io/component-base/version"
)

// Source names a file of the binary's code as it is found in the source
// it was built from: a Kubernetes file where it is in the Kubernetes tree
// (pkg/..., staging/src/k8s.io/<module>/...), regctl's and other modules'
// files under their module path. The binary records absolute paths (in the
// module cache, in a checkout) or, built with -trimpath, module@version/.
func Source(file string) string {
	file = filepath.ToSlash(file)
	r := rules()
	if r.tree != "" && strings.HasPrefix(file, r.tree) {
		return strings.TrimPrefix(file, r.tree)
	}
	if r.self != "" && strings.HasPrefix(file, r.self) {
		return r.module + strings.TrimPrefix(file, r.self)
	}
	if m := r.kubernetes.FindStringSubmatchIndex(file); m != nil {
		return file[m[1]:]
	}
	if m := r.staging.FindStringSubmatchIndex(file); m != nil {
		return "staging/src/k8s.io/" + file[m[2]:m[3]] + "/" + file[m[1]:]
	}
	if _, rest, ok := strings.Cut(file, "/pkg/mod/"); ok {
		return rest
	}
	return file
}

type sourceRules struct {
	// tree is the Kubernetes checkout the binary was built from, with a
	// slash, empty when it was built from the module cache.
	tree string
	// self is regctl's own source directory, module its module path.
	self, module string
	// kubernetes matches the root module's directory, staging a staging
	// module's, which is tagged v0.MINOR.PATCH for Kubernetes v1.MINOR.PATCH
	// (v0.0.0 in a checkout's go.mod).
	kubernetes, staging *regexp.Regexp
}

var rules = sync.OnceValue(func() sourceRules {
	r := sourceRules{kubernetes: regexp.MustCompile(`(?:^|/)k8s\.io/kubernetes@[^/]+/`)}
	minor := strings.TrimPrefix(version.DefaultKubeBinaryVersion, "1.")
	r.staging = regexp.MustCompile(`(?:^|/)k8s\.io/([^/@]+)@v0\.(?:` + regexp.QuoteMeta(minor) + `|0)\.[^/]+/`)
	// Where a staging module's code is tells whether the binary was built
	// from a checkout.
	f := runtime.FuncForPC(reflect.ValueOf(version.Get).Pointer())
	anchor, _ := f.FileLine(f.Entry())
	anchor = filepath.ToSlash(anchor)
	if root, _, ok := strings.Cut(anchor, "staging/src/k8s.io/component-base/"); ok && root != "" {
		r.tree = root
	}
	// This package's own code names regctl's module and directory.
	self := runtime.FuncForPC(reflect.ValueOf(Enclosing).Pointer())
	pkg := self.Name()[:strings.LastIndex(self.Name(), ".")]
	r.module = strings.TrimSuffix(pkg, "internal/gocode")
	file, _ := self.FileLine(self.Entry())
	r.self = strings.TrimSuffix(filepath.ToSlash(file), "internal/gocode/gocode.go")
	if r.self == filepath.ToSlash(file) {
		r.self = ""
	}
	return r
})
