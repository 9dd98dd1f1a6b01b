package wiring

import (
	"errors"
	"fmt"
	"strings"

	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	aggregatorscheme "k8s.io/kube-aggregator/pkg/apiserver/scheme"
	apiserveroptions "k8s.io/kubernetes/cmd/kube-apiserver/app/options"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
)

// validate refuses what kube-apiserver refuses among the flags regctl
// takes, with the server's own reasons. The server validates all its
// options at once; of that, the checks of --runtime-config are kept (the
// others concern flags regctl does not take, whose defaults a server
// without its certificates and keys fails).
func validate(s *apiserveroptions.ServerRunOptions) error {
	errs := s.APIEnablement.Validate(legacyscheme.Scheme, apiextensionsapiserver.Scheme, aggregatorscheme.Scheme)
	for _, err := range s.Options.Validate() {
		if strings.Contains(err.Error(), "--runtime-config=") {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("checking `--runtime-config`: %w", utilerrors.NewAggregate(errs))
	}
	// The server takes a negative --event-ttl and then writes events whose
	// lease ends at once; regctl would write such events, so it refuses.
	if s.EventTTL < 0 {
		return errors.New("`--event-ttl` must be 0 or more")
	}
	return nil
}
