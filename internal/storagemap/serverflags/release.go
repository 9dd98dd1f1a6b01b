package serverflags

import (
	"k8s.io/apimachinery/pkg/util/version"
	corerest "k8s.io/kubernetes/pkg/registry/core/rest"

	"github.com/regctl/regctl/internal/buildinfo"
	"github.com/regctl/regctl/internal/clusterrelease"
)

// KubernetesVersion is the version of k8s.io/kubernetes regctl was built
// against, from the binary's build information or, in test binaries, from
// the module directory the server's code was compiled from.
// A build from a Kubernetes source tree says the tree's (buildinfo.Source).
func KubernetesVersion() string {
	if s := buildinfo.FromSource(); s != nil {
		return s.Version
	}
	return buildinfo.ModuleVersion("k8s.io/kubernetes", corerest.New)
}

// BuildRelease is the release this build carries; nil when unknown (a
// build whose module information names no version of k8s.io/kubernetes).
func BuildRelease() *version.Version {
	v, err := version.ParseGeneric(KubernetesVersion())
	if err != nil {
		return nil
	}
	return v
}

// ManifestSource is the account a manifest's image gives of the release;
// no version when it names none.
func ManifestSource(image string) clusterrelease.Source {
	v, _ := clusterrelease.FromImage(image)
	return clusterrelease.Source{What: "the apiserver manifest's image " + image, Version: v}
}
