//go:build k8s1.35

package storagemap

// What a default kube-apiserver of the release this build carries serves,
// as the tests expect it.
const (
	releaseVersion = "v1.35.4"
	// storedPaths are the paths of a default server that own a store:
	// each resource version with storage, CRDs and APIServices included.
	storedPaths = 58
)

// defaultGroups are the groups of a default server, in the order of its
// storage providers, then the chain's.
var defaultGroups = []string{"", "authentication.k8s.io", "authorization.k8s.io", "autoscaling", "batch", "certificates.k8s.io",
	"coordination.k8s.io", "discovery.k8s.io", "networking.k8s.io", "node.k8s.io", "policy", "rbac.authorization.k8s.io",
	"scheduling.k8s.io", "storage.k8s.io", "flowcontrol.apiserver.k8s.io", "apps", "admissionregistration.k8s.io",
	"events.k8s.io", "resource.k8s.io",
	"apiextensions.k8s.io", "apiregistration.k8s.io"}
