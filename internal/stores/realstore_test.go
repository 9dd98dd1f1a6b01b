package stores

import (
	"context"
	"strconv"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storagemap/maptest"
)

// realConfigMaps is the server's config map store of namespace default on
// a real embedded etcd, with the etcd client it reads through: the tests of
// this package's unexported functions need what the external tests'
// configMapsOnEtcd gives, inside the package.
type realConfigMaps struct {
	target handle.Target
	etcd   *clientv3.Client
}

func newRealConfigMaps(t *testing.T) realConfigMaps {
	t.Helper()
	target, _ := maptest.ConfigMaps(t, "default")
	c, err := target.Client(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return realConfigMaps{target: target, etcd: c}
}

// create creates config maps through the server's store, Writers at a
// time, and returns the revision of the last one created.
func (s realConfigMaps) create(t *testing.T, names ...string) int64 {
	t.Helper()
	ctx := RequestContext(context.Background(), s.target)
	creater := s.target.Storage.(rest.Creater)
	var mu sync.Mutex
	var last int64
	var firstErr error
	parallel(len(names), func(i int) {
		cm := &api.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: names[i], Namespace: "default"}}
		out, err := creater.Create(ctx, cm, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			firstErr = err
			return
		}
		rv, err := strconv.ParseInt(out.(*api.ConfigMap).ResourceVersion, 10, 64)
		if err != nil {
			firstErr = err
			return
		}
		last = max(last, rv)
	})
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	return last
}

// key is the etcd key of the config map name.
func (s realConfigMaps) key(t *testing.T, name string) string {
	t.Helper()
	key, err := s.target.Key("default", name)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// names are the names of listed config maps, in the order listed.
func names(items []runtime.Object) []string {
	var out []string
	for _, item := range items {
		out = append(out, item.(*api.ConfigMap).Name)
	}
	return out
}
