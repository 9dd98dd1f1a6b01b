package writes

import (
	"io"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// mapClients is cli-runtime's RESTClientGetter on the map: kubectl's own
// code (its resource builder, its diff) reaches the map's server, which the
// server's request handlers serve in-process, as it would reach a
// kube-apiserver through a kubeconfig; and the namespace is -n's, as a
// kubeconfig context's or --namespace would be.
type mapClients struct {
	config *rest.Config
	mapper meta.RESTMapper
	scope  Scope
}

var _ genericclioptions.RESTClientGetter = mapClients{}

// newMapClients is the getter of config, the map's server, and mapper, the
// map's names; warnings of the server's responses go to errOut, as
// kubectl prints them.
func newMapClients(config *rest.Config, mapper meta.RESTMapper, scope Scope, errOut io.Writer) mapClients {
	config = rest.CopyConfig(config)
	config.WarningHandler = rest.NewWarningWriter(errOut, rest.WarningWriterOptions{Deduplicate: true})
	return mapClients{config: config, mapper: mapper, scope: scope}
}

func (c mapClients) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(c.config), nil }

func (c mapClients) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	d, err := discovery.NewDiscoveryClientForConfig(c.config)
	if err != nil {
		return nil, err
	}
	return memory.NewMemCacheClient(d), nil
}

func (c mapClients) ToRESTMapper() (meta.RESTMapper, error) { return c.mapper, nil }

// ToRawKubeConfigLoader is a kubeconfig whose context's namespace is -n's
// default, and -n, when given, the --namespace kubectl enforces.
func (c mapClients) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	const context = "regctl"
	config := clientcmdapi.NewConfig()
	config.Clusters[context] = &clientcmdapi.Cluster{Server: c.config.Host}
	config.Contexts[context] = &clientcmdapi.Context{Cluster: context, Namespace: c.scope.Namespace}
	config.CurrentContext = context
	overrides := &clientcmd.ConfigOverrides{}
	if c.scope.Explicit {
		overrides.Context.Namespace = c.scope.Namespace
	}
	return clientcmd.NewDefaultClientConfig(*config, overrides)
}
