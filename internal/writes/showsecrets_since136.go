//go:build !k8s1.35

package writes

import kubectldiff "k8s.io/kubectl/pkg/cmd/diff"

// setShowSecrets is kubectl diff's --show-secrets (since Kubernetes 1.36).
func setShowSecrets(kd *kubectldiff.DiffOptions, show bool) error {
	kd.ShowSecrets = show
	return nil
}
