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
	return [][2]string{
		{"version", i.Version},
		{"commit", i.Commit},
		{"goVersion", i.GoVersion},
		{"platform", i.Platform},
		{"kubernetesVersion", i.KubernetesVersion},
		{"etcdVersion", i.EtcdVersion},
	}
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
