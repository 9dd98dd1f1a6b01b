// Package clusterrelease tells which Kubernetes release a cluster runs,
// from what regctl is given (a kube-apiserver manifest's image) or can read
// in etcd without side effects (kubeadm's cluster configuration, the
// kubelets' versions), and whether it is the release a regctl build
// carries. A regctl of another release reads with other types and writes
// with other storage versions: on a newer cluster it drops the fields it
// does not know, on an older one it stores what that server cannot read.
package clusterrelease

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
)

// Source is one account of the cluster's release.
type Source struct {
	// What names where the version was read, as a message says it: "the
	// apiserver manifest's image", "kubeadm-config's kubernetesVersion",
	// "node n1's kubelet".
	What    string
	Version *version.Version
	// AtLeast marks a lower bound: a kubelet is never newer than its
	// kube-apiserver (the version skew policy), but may be older.
	AtLeast bool
}

// Mismatch says that the cluster runs another release than the build.
type Mismatch struct {
	Build   *version.Version
	Cluster *version.Version
	// AtLeast: the cluster runs Cluster's minor or a newer one.
	AtLeast bool
	What    string
	// Emulated: the build emulates the cluster's minor
	// (`--emulated-version`), which serves its APIs and gates but is not
	// its code.
	Emulated bool
}

// Judge compares the build's release with the sources, in the order given
// (the first exact source that names a version wins: a manifest given by
// hand before what etcd holds). emulated is the minor the build emulates
// ("" or the build's own for none). It returns nil when the sources say
// nothing against the build.
func Judge(build *version.Version, emulated string, sources []Source) *Mismatch {
	for _, s := range sources {
		if s.AtLeast || s.Version == nil {
			continue
		}
		if sameMinor(s.Version, build) {
			return nil
		}
		return &Mismatch{Build: build, Cluster: s.Version, What: s.What, Emulated: emulated == minor(s.Version)}
	}
	var newest *Source
	for i, s := range sources {
		if s.AtLeast && s.Version != nil && (newest == nil || s.Version.GreaterThan(newest.Version)) {
			newest = &sources[i]
		}
	}
	if newest != nil && newer(newest.Version, build) {
		return &Mismatch{Build: build, Cluster: newest.Version, AtLeast: true, What: newest.What}
	}
	return nil
}

// Newer tells whether the cluster runs a newer release than the build.
func (m *Mismatch) Newer() bool { return newer(m.Cluster, m.Build) }

// Minor is the cluster's release as builds are named: "1.37".
func (m *Mismatch) Minor() string { return minor(m.Cluster) }

// Runs says what the cluster runs and how regctl knows it.
func (m *Mismatch) Runs() string {
	if m.AtLeast {
		return fmt.Sprintf("this cluster runs Kubernetes %s or newer (%s is %s)", m.Minor(), m.What, m.Cluster)
	}
	return fmt.Sprintf("this cluster runs Kubernetes %s (%s)", m.Cluster, m.What)
}

// Risk is what a write of this build may do to the cluster's data.
func (m *Mismatch) Risk() string {
	if m.Newer() {
		return fmt.Sprintf("it reads values without the fields %s added, and would write them back without", m.Minor())
	}
	if m.Emulated {
		return fmt.Sprintf("it emulates %s with %s's code, whose storage versions and field handling may differ", m.Minor(), minor(m.Build))
	}
	return fmt.Sprintf("it may store versions and fields %s cannot read", m.Minor())
}

// Warning is what a command says of the mismatch, once, on stderr; with
// ignored, the user has let writes go on.
func (m *Mismatch) Warning(override string, ignored bool) string {
	w := fmt.Sprintf("%s and this regctl carries %s: %s; use the regctl for Kubernetes %s (make build K8S=%s)",
		m.Runs(), m.Build, m.Risk(), m.Minor(), m.Minor())
	if !ignored {
		w += fmt.Sprintf("; writes are refused unless `%s`", override)
	}
	return w
}

// WriteError is why a write is refused, and that override (a flag) writes
// anyway.
func (m *Mismatch) WriteError(override string) error {
	return fmt.Errorf("%s and this regctl carries %s, so it does not write: %s; use the regctl for Kubernetes %s (make build K8S=%s), or `%s` to write anyway",
		m.Runs(), m.Build, m.Risk(), m.Minor(), m.Minor(), override)
}

// FromImage reads the release of a kube-apiserver image reference
// (registry.k8s.io/kube-apiserver:v1.37.2, with a digest or a vendor's
// suffix after the version): false when its tag is no version.
func FromImage(image string) (*version.Version, bool) {
	ref, _, _ := strings.Cut(image, "@")
	slash := strings.LastIndex(ref, "/")
	colon := strings.LastIndex(ref, ":")
	if colon <= slash {
		return nil, false
	}
	return parse(ref[colon+1:])
}

// parse reads a Kubernetes version as its components print it (v1.37.2,
// v1.37.2-eks-1234, 1.37): false for anything else.
func parse(s string) (*version.Version, bool) {
	if !strings.HasPrefix(s, "v") && !strings.HasPrefix(s, "1.") {
		return nil, false
	}
	v, err := version.ParseGeneric(s)
	if err != nil || v.Major() == 0 {
		return nil, false
	}
	return v, true
}

func minor(v *version.Version) string { return fmt.Sprintf("%d.%d", v.Major(), v.Minor()) }

func sameMinor(a, b *version.Version) bool { return a.Major() == b.Major() && a.Minor() == b.Minor() }

func newer(a, b *version.Version) bool {
	return a.Major() > b.Major() || a.Major() == b.Major() && a.Minor() > b.Minor()
}
