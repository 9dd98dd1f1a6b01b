// Package maptest opens the storage map of a default kube-apiserver on an
// embedded etcd of its own, for the tests of the packages that take the
// map's handles: a real store on a real etcd, never a mock.
package maptest

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storagemap"
)

// Open opens a session on a default server's map, built on an ephemeral
// embedded etcd, and returns it with that etcd's client. Both are closed
// when the test ends.
func Open(t testing.TB) (*storagemap.Session, *clientv3.Client) {
	t.Helper()
	ctx := context.Background()
	s, err := storagemap.Open(ctx, storagemap.Config{Options: storagemap.NewOptions(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c, err := s.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// ConfigMaps is the server's config map store in namespace on such a map,
// and a function that creates a config map in it through that store.
func ConfigMaps(t testing.TB, namespace string) (handle.Target, func(name string)) {
	t.Helper()
	s, _ := Open(t)
	h := s.Map.Handles["configmaps"]
	create := func(name string) {
		t.Helper()
		ctx := genericapirequest.WithNamespace(genericapirequest.NewContext(), namespace)
		cm := &api.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
		if _, err := h.Storage.(rest.Creater).Create(ctx, cm, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return handle.Target{Handle: h, Namespace: namespace}, create
}
