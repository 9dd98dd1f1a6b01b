package extensions

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/regctl/regctl/internal/etcdview/embedded"
	"github.com/regctl/regctl/internal/logs/logstest"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
)

func TestMain(m *testing.M) { logstest.Main(m) }

// TestLeftoversAreMadeUpFromWhatIsStored: the objects of a CRD that is gone
// are read through a CRD made up from them (their kind, versions and
// scope), for a name that names a group and that nothing serves; other
// names read nothing.
func TestLeftoversAreMadeUpFromWhatIsStored(t *testing.T) {
	e, err := embedded.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{e.ClientURL}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx := context.Background()
	for key, value := range map[string]string{
		"/registry/example.com/widgets/shop/a":   `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","namespace":"shop"}}`,
		"/registry/example.com/widgets/shop/b":   `{"apiVersion":"example.com/v1beta1","kind":"Widget","metadata":{"name":"b","namespace":"shop"}}`,
		"/registry/example.com/gadgets/g":        `{"apiVersion":"example.com/v2","kind":"Gadget","metadata":{"name":"g"}}`,
		"/registry/example.com/strangers/shop/s": `{"apiVersion":"other.io/v1","kind":"Stranger","metadata":{"name":"s","namespace":"shop"}}`,
		"/registry/example.com/served/shop/x":    `{"apiVersion":"example.com/v1","kind":"Served","metadata":{"name":"x","namespace":"shop"}}`,
	} {
		if _, err := client.Put(ctx, key, value); err != nil {
			t.Fatal(err)
		}
	}
	c := Chain{Etcd: *serverflags.NewOptions().Server.Etcd, Client: func(context.Context) (*clientv3.Client, error) { return client, nil }}
	serves := func(name string) bool { return name == "served.example.com" }

	crds, err := c.Leftovers(ctx, "widgets.example.com,gadgets.v2.example.com,pods,served.example.com,none.example.com", serves)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for name := range crds {
		names = append(names, name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"gadgets.example.com", "widgets.example.com"}) {
		t.Fatalf("made up CRDs %v, want gadgets and widgets", names)
	}
	w := crds["widgets.example.com"]
	if w.Spec.Names.Kind != "Widget" || w.Spec.Scope != apiextensionsv1.NamespaceScoped || !slices.Equal(w.Status.StoredVersions, []string{"v1", "v1beta1"}) || !w.Spec.Versions[0].Storage {
		t.Errorf("widgets: %+v, %+v; want kind Widget, namespaced, v1 (stored) and v1beta1", w.Spec, w.Status)
	}
	if warning := *w.Spec.Versions[0].DeprecationWarning; !strings.Contains(warning, "customresourcedefinition widgets.example.com is gone: 2 keys remain under /registry/example.com/widgets/") {
		t.Errorf("widgets' warning %q", warning)
	}
	if g := crds["gadgets.example.com"]; g.Spec.Scope != apiextensionsv1.ClusterScoped || g.Spec.Names.Kind != "Gadget" {
		t.Errorf("gadgets: %+v, want cluster-scoped Gadgets", g.Spec)
	}

	// Keys where a CRD would store its objects, none of them one of its
	// objects: said, not made up.
	_, err = c.Leftovers(ctx, "strangers.example.com", serves)
	if err == nil || !strings.Contains(err.Error(), "1 key remains under /registry/example.com/strangers/, where customresourcedefinition strangers.example.com stored its objects, but none of the first 500 is one of its objects") {
		t.Errorf("strangers: %v", err)
	}
}
