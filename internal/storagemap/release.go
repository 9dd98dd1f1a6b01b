package storagemap

import (
	"context"
	"path"

	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	serverstorage "k8s.io/apiserver/pkg/server/storage"

	"github.com/regctl/regctl/internal/clusterrelease"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
)

// MismatchFlag is regctl's flag that lets a command write to the etcd of a
// cluster that runs another Kubernetes release than the build carries,
// with MismatchIgnore.
const (
	MismatchFlag   = "kubernetes-version-mismatch"
	MismatchRefuse = "refuse"
	MismatchIgnore = "ignore"
)

// mismatchOverride is the flag that writes anyway, as messages name it.
const mismatchOverride = "--" + MismatchFlag + "=" + MismatchIgnore

// checkRelease tells whether the cluster the session works on runs the
// release this build carries, from the manifest's image and what etcd
// holds (clusterrelease.Stored, found where the server's storage factory
// keeps ConfigMaps and Nodes). When it runs another, a write is refused
// (unless MismatchFlag says ignore) and any other command warns once.
func (s *Session) checkRelease(ctx context.Context, cfg Config, factory serverstorage.StorageFactory, etcdPrefix string) error {
	build := serverflags.BuildRelease()
	if build == nil || cfg.Options == nil {
		return nil
	}
	sources := []clusterrelease.Source{serverflags.ManifestSource(cfg.Options.Image())}
	if cfg.EtcdGiven() {
		c, err := s.Client(ctx)
		if err != nil {
			return err
		}
		keyPrefix := func(resource string) string {
			return path.Join("/", etcdPrefix, factory.ResourcePrefix(schema.GroupResource{Resource: resource}))
		}
		nsCtx := genericapirequest.WithNamespace(ctx, clusterrelease.KubeadmConfigNamespace)
		kubeadmConfig, err := genericregistry.NamespaceKeyFunc(nsCtx, keyPrefix("configmaps"), clusterrelease.KubeadmConfigName)
		if err != nil {
			return err
		}
		stored, err := clusterrelease.Stored(ctx, c, clusterrelease.Keys{KubeadmConfig: kubeadmConfig, Nodes: keyPrefix("nodes") + "/"})
		if err != nil {
			return err
		}
		sources = append(sources, stored...)
	}
	emulated, _ := cfg.Options.Effective()
	m := clusterrelease.Judge(build, emulated, sources)
	if m == nil {
		return nil
	}
	ignore := cfg.ReleaseMismatch == MismatchIgnore
	if cfg.Writes && !ignore {
		return m.WriteError(mismatchOverride)
	}
	if cfg.Warn != nil {
		cfg.Warn(m.Warning(mismatchOverride, ignore))
	}
	return nil
}
