//go:build k8s1.35

package writes

import (
	"errors"

	kubectldiff "k8s.io/kubectl/pkg/cmd/diff"
)

// setShowSecrets: before Kubernetes 1.36, kubectl diff has no
// --show-secrets and always masks a Secret's values.
func setShowSecrets(_ *kubectldiff.DiffOptions, show bool) error {
	if show {
		return errors.New("`--show-secrets` is kubectl diff's since Kubernetes 1.36: this regctl carries the kubectl diff of 1.35, which always masks Secrets")
	}
	return nil
}
