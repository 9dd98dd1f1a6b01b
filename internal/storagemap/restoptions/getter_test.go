package restoptions

import (
	"context"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"

	"github.com/regctl/regctl/internal/routetable"
)

// serverGetter stands for the server's RESTOptionsGetter: what it returns
// is fixed, as the storage factory would return it for core resources
// stored in servers (an etcd of events that is never dialed when nil).
type serverGetter struct {
	decorator generic.StorageDecorator
	servers   []string
}

func (s serverGetter) GetRESTOptions(gr schema.GroupResource, _ runtime.Object) (generic.RESTOptions, error) {
	v1 := schema.GroupVersion{Version: "v1"}
	config := storagebackend.NewDefaultConfig("/registry", legacyscheme.Codecs.LegacyCodec(v1))
	config.EncodeVersioner = runtime.NewMultiGroupVersioner(v1)
	config.Transport.ServerList = s.servers
	if s.servers == nil {
		config.Transport.ServerList = []string{"https://etcd-events:2379"}
	}
	return generic.RESTOptions{
		StorageConfig:         &storagebackend.ConfigForResource{GroupResource: gr, Config: *config},
		Decorator:             s.decorator,
		ResourcePrefix:        gr.Resource,
		CountMetricPollPeriod: time.Minute,
	}, nil
}

// TestTheGetterRecordsTheServersDecisionAndTurnsItsLoopsOff: each decision
// is recorded (prefix, decorator by the function the server chose, storage
// version and media type from the codec), for getters made with ForServer
// in the root; the stores get lazy storage without compaction or polling.
func TestTheGetterRecordsTheServersDecisionAndTurnsItsLoopsOff(t *testing.T) {
	main := []string{"https://etcd:2379"}
	encryption := func(gr schema.GroupResource) string { return map[string]string{"secrets": "aescbc"}[gr.Resource] }
	root := &Getter{Delegate: serverGetter{decorator: genericregistry.StorageWithCacher()}, MainServers: main, Encryption: encryption,
		Preflight: func(context.Context, storagebackend.TransportConfig) error { return nil }}
	other := root.ForServer(serverGetter{decorator: generic.UndecoratedStorage}, legacyscheme.Scheme)

	pods, events := schema.GroupResource{Resource: "pods"}, schema.GroupResource{Resource: "events"}
	opts, err := root.GetRESTOptions(pods, &api.Pod{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.GetRESTOptions(events, &api.Event{}); err != nil {
		t.Fatal(err)
	}

	if opts.StorageConfig.CompactionInterval != 0 || opts.StorageConfig.DBMetricPollInterval != 0 || opts.CountMetricPollPeriod != 0 {
		t.Errorf("loops left on: compaction %v, db metrics %v, count metrics %v", opts.StorageConfig.CompactionInterval, opts.StorageConfig.DBMetricPollInterval, opts.CountMetricPollPeriod)
	}
	if name := decoratorName(opts.Decorator); name == routetable.DecoratorCacher || name == routetable.DecoratorUndecorated {
		t.Errorf("the stores get the server's decorator %s, want regctl's lazy one", name)
	}

	for _, c := range []struct {
		gr        schema.GroupResource
		decorator string
	}{{pods, routetable.DecoratorCacher}, {events, routetable.DecoratorUndecorated}} {
		d, ok := root.Decision(c.gr)
		if !ok {
			t.Fatalf("%s: no decision recorded in the root getter", c.gr)
		}
		if d.ResourcePrefix != c.gr.Resource || d.EtcdPrefix != "/registry" || d.Decorator != c.decorator ||
			d.StorageVersion != "v1" || d.MediaType != "application/json" {
			t.Errorf("%s: decision %+v, want prefix /registry/%s, decorator %s, v1 as json", c.gr, d, c.gr.Resource, c.decorator)
		}
		if !slices.Equal(d.EtcdServers, []string{"https://etcd-events:2379"}) {
			t.Errorf("%s: servers %v, want those other than the main ones named", c.gr, d.EtcdServers)
		}
	}
	if d, _ := root.Decision(pods); d.Encryption != "" {
		t.Errorf("pods encrypted with %q", d.Encryption)
	}
	if _, ok := root.Decision(schema.GroupResource{Resource: "secrets"}); ok {
		t.Error("a decision for a resource never asked for")
	}
}
