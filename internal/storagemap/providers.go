package storagemap

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/regctl/regctl/internal/storagemap/clusterips"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	genericapiserver "k8s.io/apiserver/pkg/server"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	apiserveroptions "k8s.io/kubernetes/cmd/kube-apiserver/app/options"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/controlplane"
	controlplaneapiserver "k8s.io/kubernetes/pkg/controlplane/apiserver"
	"k8s.io/kubernetes/pkg/controlplane/reconcilers"
	kubeletclient "k8s.io/kubernetes/pkg/kubelet/client"
	"k8s.io/kubernetes/pkg/serviceaccount"
)

// storageProviders is kube-apiserver's own list of REST storage providers,
// from controlplane.CompletedConfig.StorageProviders: the legacy (core)
// provider first, then every built-in group, in the server's order. The
// config carries what the providers read from a server's. The loopback
// client reaches regctl's own stores in-process (loopback.go); of the
// informers on it only the cluster IP allocator's are ever started, by a
// write that needs them (package clusterips); the endpoint reconciler is none.
func storageProviders(s *apiserveroptions.ServerRunOptions, generic *genericapiserver.Config, factory serverstorage.StorageFactory, loopback *restclient.Config) ([]controlplaneapiserver.RESTStorageProvider, informers.SharedInformerFactory, error) {
	cfg, client, err := controlplaneConfig(s, generic, factory, loopback)
	if err != nil {
		return nil, nil, err
	}
	providers, err := cfg.Complete().StorageProviders(client)
	if err != nil {
		return nil, nil, fmt.Errorf("creating the storage providers: %w", err)
	}
	return providers, cfg.ControlPlane.Extra.VersionedInformers, nil
}

// genericConfig is the part of the server's generic config that decides
// what it serves, from its options as BuildGenericConfig applies them: the
// effective (emulated) version and the resource config of --runtime-config
// over the server's defaults.
func genericConfig(s *apiserveroptions.ServerRunOptions) (*genericapiserver.Config, error) {
	generic := genericapiserver.NewConfig(legacyscheme.Codecs)
	if err := s.GenericServerRunOptions.ApplyTo(generic); err != nil {
		return nil, err
	}
	if err := s.APIEnablement.ApplyTo(generic, controlplane.DefaultAPIResourceConfigSource(), legacyscheme.Scheme); err != nil {
		return nil, fmt.Errorf("reading `--runtime-config`: %w", err)
	}
	return generic, nil
}

// controlplaneConfig is the part of kube-apiserver's controlplane.Config
// the storage providers read, from the server's options.
func controlplaneConfig(s *apiserveroptions.ServerRunOptions, generic *genericapiserver.Config, factory serverstorage.StorageFactory, loopback *restclient.Config) (*controlplane.Config, *kubernetes.Clientset, error) {
	primary, secondary, err := clusterips.ServiceIPRanges(s.ServiceClusterIPRanges)
	if err != nil {
		return nil, nil, err
	}
	issuer, err := throwawayIssuer()
	if err != nil {
		return nil, nil, err
	}
	client, err := kubernetes.NewForConfig(loopback)
	if err != nil {
		return nil, nil, err
	}
	generic.LoopbackClientConfig = loopback
	generic.ExternalAddress = "127.0.0.1:443"
	// The stores ask the authorizer when a write would grant or reach
	// something (RBAC escalation, admission policy params). regctl writes as
	// a member of system:masters, which the server's own privileged-group
	// authorizer allows everything: whoever can write etcd can do anything.
	generic.Authorization.Authorizer = authorizerfactory.NewPrivilegedGroups(user.SystemPrivilegedGroup)
	return &controlplane.Config{
		ControlPlane: controlplaneapiserver.Config{
			Generic: generic,
			Extra: controlplaneapiserver.Extra{
				StorageFactory:       factory,
				EventTTL:             s.EventTTL,
				ServiceAccountIssuer: issuer,
				VersionedInformers:   informers.NewSharedInformerFactory(client, 0),
			},
		},
		Extra: controlplane.Extra{
			KubeletClientConfig:     kubeletConfig(s.KubeletConfig),
			ServiceIPRange:          primary,
			SecondaryServiceIPRange: secondary,
			ServiceNodePortRange:    s.ServiceNodePortRange,
			RepairServicesInterval:  3 * time.Minute,
			// The server's default, a lease reconciler, would open its own
			// etcd storage; regctl reconciles no endpoints.
			EndpointReconcilerConfig: controlplane.EndpointReconcilerConfig{Reconciler: reconcilers.NewNoneEndpointReconciler()},
		},
	}, client, nil
}

// throwawayIssuer is a token generator, which is what makes
// serviceaccounts/token exist. regctl never serves tokens; the key is thrown
// away with the process.
func throwawayIssuer() (serviceaccount.TokenGenerator, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return serviceaccount.JWTTokenGenerator("https://kubernetes.default.svc", key)
}

// kubeletConfig is the server's kubelet client config without its TLS
// files. The core provider loads them to build the transport of the paths
// that reach kubelets (pods/log, pods/exec, nodes/proxy); regctl never
// connects to a kubelet, so a server's command line must not need those
// files where regctl runs.
func kubeletConfig(c kubeletclient.KubeletClientConfig) kubeletclient.KubeletClientConfig {
	c.TLSClientConfig = kubeletclient.KubeletTLSConfig{}
	return c
}
