package clusterrelease

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/kubernetes/scheme"
	kubeadmconstants "k8s.io/kubernetes/cmd/kubeadm/app/constants"
	"sigs.k8s.io/yaml"

	"github.com/regctl/regctl/internal/etcdview"
)

// nodesRead is how many nodes' kubelets are asked: a lower bound needs no
// more, and a command pays for one small read whatever the cluster's size.
const nodesRead = 16

// Keys are where the accounts of the release are in etcd, as the server's
// storage names them.
type Keys struct {
	// KubeadmConfig is the key of kube-system's kubeadm-config ConfigMap.
	KubeadmConfig string
	// Nodes is the key prefix of Nodes.
	Nodes string
}

// KubeadmConfig is the kubeadm-config ConfigMap's namespace and name.
const (
	KubeadmConfigNamespace = metav1.NamespaceSystem
	KubeadmConfigName      = kubeadmconstants.KubeadmConfigConfigMap
)

// Stored reads the accounts of the release etcd holds: the
// kubernetesVersion of kubeadm's cluster configuration, then the versions
// of a few nodes' kubelets. A value it cannot decode (encrypted, or not
// what it should be) is no account; an etcd that does not answer is an
// error.
func Stored(ctx context.Context, c *clientv3.Client, keys Keys) ([]Source, error) {
	var out []Source
	kv, err := etcdview.ValueAt(ctx, c, keys.KubeadmConfig, 0)
	if err != nil {
		return nil, err
	}
	if kv != nil {
		if v, ok := kubeadmVersion(kv.Value); ok {
			out = append(out, Source{What: "kubeadm-config's kubernetesVersion", Version: v})
		}
	}
	kvs, err := etcdview.FirstValues(ctx, c, keys.Nodes, nodesRead)
	if err != nil {
		return nil, err
	}
	for _, kv := range kvs {
		var node corev1.Node
		if !decode(kv.Value, &node) {
			continue
		}
		if v, ok := parse(node.Status.NodeInfo.KubeletVersion); ok {
			out = append(out, Source{What: fmt.Sprintf("node %s's kubelet", node.Name), Version: v, AtLeast: true})
		}
	}
	return out, nil
}

// kubeadmVersion reads kubernetesVersion from the ClusterConfiguration
// kubeadm keeps in its ConfigMap (a field of that name in every version of
// kubeadm's configuration API).
func kubeadmVersion(value []byte) (*version.Version, bool) {
	var cm corev1.ConfigMap
	if !decode(value, &cm) {
		return nil, false
	}
	var cfg struct {
		KubernetesVersion string `json:"kubernetesVersion"`
	}
	if err := yaml.Unmarshal([]byte(cm.Data[kubeadmconstants.ClusterConfigurationConfigMapKey]), &cfg); err != nil {
		return nil, false
	}
	return parse(cfg.KubernetesVersion)
}

// decode reads a stored core v1 value, protobuf or JSON, into into.
func decode(value []byte, into runtime.Object) bool {
	_, _, err := scheme.Codecs.UniversalDeserializer().Decode(value, nil, into)
	return err == nil
}
