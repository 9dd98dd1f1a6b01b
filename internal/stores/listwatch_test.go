package stores_test

import (
	"context"
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/stores"
)

// configMapsOnEtcd builds the map on a real embedded etcd and returns the
// target of config maps in namespace default, and a function that creates
// one through the server's store.
func configMapsOnEtcd(t *testing.T) (stores.Target, func(name string)) {
	t.Helper()
	e, err := etcdview.StartEmbedded(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	opts := storagemap.NewOptions()
	opts.Server.Etcd.StorageConfig.Transport.ServerList = []string{e.ClientURL}
	w, err := storagemap.Open(context.Background(), storagemap.Config{Options: opts, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	h := w.Map.Handles["configmaps"]
	create := func(name string) {
		t.Helper()
		ctx := genericapirequest.WithNamespace(genericapirequest.NewContext(), "default")
		cm := &api.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
		if _, err := h.Storage.(rest.Creater).Create(ctx, cm, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return stores.Target{Handle: h, Namespace: "default"}, create
}

// TestListThenWatchMissesNothingAndShowsNothingTwice: what is listed is
// not reported again by the watch, and a change made once the list is read
// is reported.
func TestListThenWatchMissesNothingAndShowsNothingTwice(t *testing.T) {
	target, create := configMapsOnEtcd(t)
	create("a")
	create("b")
	// A watch that missed c would wait for it until the deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var listed, events []string
	stop := errors.New("seen")
	err := stores.ListThenWatch(ctx, target, stores.ListThenWatchOptions{},
		func(page stores.Page) error {
			for _, item := range page.Items {
				listed = append(listed, item.(*api.ConfigMap).Name)
			}
			return nil
		},
		func() error {
			create("c") // after the list, before the watch starts
			return nil
		},
		func(ev watch.Event) error {
			events = append(events, string(ev.Type)+" "+ev.Object.(*api.ConfigMap).Name)
			return stop
		})
	if !errors.Is(err, stop) {
		t.Fatalf("ListThenWatch: %v", err)
	}
	if len(listed) != 2 || listed[0] != "a" || listed[1] != "b" {
		t.Errorf("listed %v, want a and b", listed)
	}
	if len(events) != 1 || events[0] != "ADDED c" {
		t.Errorf("events %v, want c added once", events)
	}
}

func TestListThenWatchOfAMissingObjectIsNotFound(t *testing.T) {
	target, create := configMapsOnEtcd(t)
	create("a")
	err := stores.ListThenWatch(context.Background(), target, stores.ListThenWatchOptions{Name: "nope"},
		func(stores.Page) error { return nil }, func() error { return nil },
		func(watch.Event) error { return errors.New("no event expected") })
	if !apierrors.IsNotFound(err) {
		t.Errorf("err %v, want NotFound", err)
	}
}
