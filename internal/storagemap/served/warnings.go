package served

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/endpoints/deprecation"
	versioninfo "k8s.io/component-base/version"

	"github.com/regctl/regctl/internal/storagemap/serverflags"
)

// PathWarnings are the warnings the server adds to every request to path p
// of v, whatever its verb: for a built-in group, the deprecation warning
// the installer attaches to each of the path's handlers when its kind is
// deprecated (registerResourceHandlers); for a custom resource, those the
// CRD handler adds for a deprecated version of its CRD.
func PathWarnings(v Version, p string, kind schema.GroupVersionKind) []string {
	if v.Info == nil {
		return v.Warnings[p]
	}
	// As the installer does: a new object of the kind the path serves,
	// with its group, version and kind set, asked for its generated
	// APILifecycle functions.
	obj, err := v.Info.Scheme.New(kind)
	if err != nil {
		return nil
	}
	obj.GetObjectKind().SetGroupVersionKind(kind)
	major, minor := serverMajorMinor()
	if !deprecation.IsDeprecated(obj, major, minor) {
		return nil
	}
	return []string{deprecation.WarningMessage(obj)}
}

// serverMajorMinor is the version the installer compares deprecations
// with: the server binary's (component-base's version.Get, which release
// builds stamp). regctl is seldom built with those stamps, so without them
// it is the version of the Kubernetes code regctl is built from, which is
// what a kube-apiserver built from that code says. When neither is known it
// is 0.0, which, as on the server, counts every declared deprecation.
var serverMajorMinor = sync.OnceValues(func() (int, int) {
	if major, minor, err := deprecation.MajorMinor(versioninfo.Get()); err == nil {
		return major, minor
	}
	if v, err := utilversion.ParseGeneric(serverflags.KubernetesVersion()); err == nil {
		return int(v.Major()), int(v.Minor())
	}
	return 0, 0
})
