package serverflags

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	cliflag "k8s.io/component-base/cli/flag"
	aggregatorscheme "k8s.io/kube-aggregator/pkg/apiserver/scheme"
	apiserveroptions "k8s.io/kubernetes/cmd/kube-apiserver/app/options"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	controlplaneoptions "k8s.io/kubernetes/pkg/controlplane/apiserver/options"
)

// validate refuses what kube-apiserver refuses among the flags regctl
// takes, with the server's own reasons. The server validates all its
// options at once; of that, the checks of --runtime-config are kept (the
// others concern flags regctl does not take, whose defaults a server
// without its certificates and keys fails).
func validate(ctx context.Context, s *apiserveroptions.ServerRunOptions) error {
	runtimeConfig, err := completeRuntimeConfig(ctx, s.APIEnablement.RuntimeConfig)
	if err != nil {
		return fmt.Errorf("checking `--runtime-config`: %w", err)
	}
	s.APIEnablement.RuntimeConfig = runtimeConfig
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

// completeRuntimeConfig is --runtime-config as the server's option
// completion leaves it: `v1`, `api/v1` and their resources name the core
// group ("/v1"), `api/legacy` is dropped. The server does that in the middle
// of completing all its options, so the completion runs here on a copy of
// the default options that carries only the runtime config and serves
// nothing (no secure port, so no certificate is made).
func completeRuntimeConfig(ctx context.Context, runtimeConfig cliflag.ConfigurationMap) (cliflag.ConfigurationMap, error) {
	if len(runtimeConfig) == 0 {
		return runtimeConfig, nil
	}
	o := controlplaneoptions.NewOptions()
	o.SecureServing.BindPort = 0
	o.APIEnablement.RuntimeConfig = maps.Clone(runtimeConfig)
	completed, err := o.Complete(ctx, nil, nil)
	if err != nil {
		return nil, err
	}
	return completed.APIEnablement.RuntimeConfig, nil
}
