// Package buildinfo says which regctl this is and which Kubernetes and etcd
// code it was built from.
package buildinfo

import (
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"

	"go.etcd.io/etcd/server/v3/storage/datadir"
)

// Set by release builds:
//
//	-ldflags "-X github.com/regctl/regctl/internal/buildinfo.version=v1.2.3
//	          -X github.com/regctl/regctl/internal/buildinfo.commit=<sha>"
var (
	version string
	commit  string
)

// Set by builds from a Kubernetes source tree (releases/source, `make
// build K8S=/path/to/kubernetes`).
var (
	sourceTree, sourceCommit, sourceDirty, sourceVersion, sourceDescribe, sourceBase string
)

// Source is the Kubernetes source tree a binary was built from.
type Source struct {
	// Tree is the checkout's directory, Commit its HEAD and Dirty whether
	// it had changes; Describe is `git describe --tags --dirty`.
	Tree     string `json:"tree"`
	Commit   string `json:"commit,omitempty"`
	Dirty    bool   `json:"dirty"`
	Describe string `json:"describe,omitempty"`
	// Version is what the build says its Kubernetes is (route tables,
	// the release guard): the newest tag of the tree's minor, v1.MINOR
	// without git. Release names the release whose pins and drift files it
	// was built with.
	Version string `json:"version"`
	Release string `json:"release"`
}

// FromSource is the source tree the binary was built from; nil for a
// build of a Kubernetes release.
func FromSource() *Source {
	if sourceTree == "" {
		return nil
	}
	return &Source{Tree: sourceTree, Commit: sourceCommit, Dirty: sourceDirty == "true", Describe: sourceDescribe, Version: sourceVersion, Release: sourceBase}
}

// EtcdModule is the module of the etcd server regctl embeds.
const EtcdModule = "go.etcd.io/etcd/server/v3"

// Info describes a regctl binary.
type Info struct {
	Version           string `json:"version"`
	Commit            string `json:"commit"`
	GoVersion         string `json:"goVersion"`
	Platform          string `json:"platform"`
	KubernetesVersion string `json:"kubernetesVersion"`
	EtcdVersion       string `json:"etcdVersion"`
	// KubernetesSource is the Kubernetes tree of a build from source.
	KubernetesSource *Source `json:"kubernetesSource,omitempty"`
}

// Read returns the build information of the running binary. The Kubernetes
// version is passed in because finding it needs the server's code, which
// this package does not import.
func Read(kubernetesVersion string) Info {
	info := Info{
		Version:           version,
		Commit:            commit,
		GoVersion:         runtime.Version(),
		Platform:          runtime.GOOS + "/" + runtime.GOARCH,
		KubernetesVersion: kubernetesVersion,
		EtcdVersion:       EtcdVersion(),
		KubernetesSource:  FromSource(),
	}
	// Without ldflags, fall back to what the go command recorded: the
	// module version for `go install ...@v1.2.3`, and the VCS revision
	// for builds inside a checkout.
	if bi, ok := debug.ReadBuildInfo(); ok {
		if info.Version == "" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && info.Commit == "" {
				info.Commit = s.Value
			}
		}
	}
	if info.Version == "" {
		info.Version = "(devel)"
	}
	if info.Commit == "" {
		info.Commit = "unknown"
	}
	return info
}

// Fields are the info's keys and values in a fixed order, the keys as in
// JSON, for aligned text output.
func (i Info) Fields() [][2]string {
	fields := [][2]string{
		{"version", i.Version},
		{"commit", i.Commit},
		{"goVersion", i.GoVersion},
		{"platform", i.Platform},
		{"kubernetesVersion", i.KubernetesVersion},
		{"etcdVersion", i.EtcdVersion},
	}
	if s := i.KubernetesSource; s != nil {
		commit := s.Commit
		if commit == "" {
			commit = "(no git)"
		} else if s.Dirty {
			commit += " (with changes)"
		}
		fields = append(fields,
			[2]string{"kubernetesSource", s.Tree},
			[2]string{"kubernetesCommit", commit},
			[2]string{"kubernetesDescribe", s.Describe},
			[2]string{"builtAs", "Kubernetes " + s.Release + " (pins and drift files)"})
	}
	return fields
}

// EtcdVersion is the version of the etcd server module regctl was built
// against.
func EtcdVersion() string {
	// Any function compiled from the module will do; a leaf package keeps
	// this package light.
	return ModuleVersion(EtcdModule, datadir.ToBackendFileName)
}

// ModuleVersion is the version of module the running binary was built
// against, read from its build information. Test binaries carry no
// dependency list, so it falls back to the source file of fromModule, a
// function compiled from that module: the module cache directory
// (module@vX.Y.Z/...) holds the same version, with or without -trimpath.
// It returns "unknown" when neither says.
func ModuleVersion(module string, fromModule any) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range bi.Deps {
			if dep.Path != module {
				continue
			}
			if dep.Replace != nil && dep.Replace.Version != "" {
				return dep.Replace.Version
			}
			return dep.Version
		}
	}
	fn := runtime.FuncForPC(reflect.ValueOf(fromModule).Pointer())
	if fn == nil {
		return "unknown"
	}
	file, _ := fn.FileLine(fn.Entry())
	if _, rest, ok := strings.Cut(file, module+"@"); ok {
		if v, _, ok := strings.Cut(rest, "/"); ok {
			return v
		}
	}
	return "unknown"
}
