package storagemap

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/yaml"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
	"github.com/regctl/regctl/internal/stores"
)

// manyCRDs are count CRDs of four groups g0.example...g3.example,
// plurals thing0s... (thing7s.g3.example),
// the even ones with a status subresource, each with a schema that the
// server compiles CEL rules of when it builds the CRD's storage.
func manyCRDs(count int) []string {
	var out []string
	for i := range count {
		sub := ""
		if i%2 == 0 {
			sub = "subresources: {status: {}}"
		}
		out = append(out, fmt.Sprintf(`
metadata: {name: thing%[1]ds.g%[3]d.example}
spec:
  group: g%[3]d.example
  scope: Namespaced
  names: {plural: thing%[1]ds, singular: thing%[1]d, kind: Thing%[1]d, listKind: Thing%[1]dList, shortNames: [th%[1]d]}
  versions:
  - name: v1
    served: true
    storage: true
    %[2]s
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties: {size: {type: integer}}
            x-kubernetes-validations: [{rule: "self.size >= 0", message: "size is not negative"}]
`, i, sub, i%4))
	}
	return out
}

// TestCommandsBuildOnlyTheCRDsTheyTouch holds the map to what the apiserver
// does with many CRDs: a custom resource's storage is built when a command
// first reads or writes it, and no other's. Routes, keys and names come
// from the CRDs alone; a command on a built-in resource reads no CRD.
func TestCommandsBuildOnlyTheCRDsTheyTouch(t *testing.T) {
	e, client := liveEtcd(t)
	w := build(t, "--etcd-servers="+e.ClientURL)
	writeCRDs(t, w, manyCRDs(40), true)
	w.Close()

	open := func(only string) *Session {
		t.Helper()
		opts := serverflags.NewOptions()
		opts.Server.Etcd.StorageConfig.Transport.ServerList = []string{e.ClientURL}
		s, err := Open(context.Background(), Config{Options: opts, Timeout: 10 * time.Second, Only: only})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	pods := open("pods")
	if _, err := pods.Map.Resolve("pods"); err != nil {
		t.Fatal(err)
	}
	if pods.Map.crs != nil || len(pods.Map.crds) != 0 {
		t.Errorf("a map for pods read the CRDs")
	}

	all := open("")
	if got := len(all.Map.crds); got != 40+20 {
		t.Errorf("the map has %d custom resource paths, want 60 (40 resources, 20 statuses)", got)
	}
	for _, h := range all.Map.Ordered() {
		if strings.HasSuffix(h.Route.Group, ".example") && (h.Serve == nil || h.Route.KeyPrefix == "" || h.Route.StorageVersion != h.Route.Group+"/v1") {
			t.Errorf("%s: route %+v, serving deferred %v; want the route of the CRD, and serving deferred", h.Path, h.Route, h.Serve != nil)
		}
	}
	if built := all.Map.BuiltCRDs(); len(built) != 0 {
		t.Errorf("building every route built the storage of %v", built)
	}
	// At a revision (what diff --from rev:N reads through), page after
	// page of CRDs, each page at that revision.
	rev, err := etcdview.Revision(context.Background(), client)
	if err != nil {
		t.Fatal(err)
	}
	opts := serverflags.NewOptions()
	opts.Server.Etcd.StorageConfig.Transport.ServerList = []string{e.ClientURL}
	then, err := Open(context.Background(), Config{Options: opts, Timeout: 10 * time.Second, CRDRevision: rev})
	if err != nil {
		t.Fatalf("a map at revision %d: %v", rev, err)
	}
	t.Cleanup(func() { then.Close() })
	if got := len(then.Map.crds); got != 40+20 {
		t.Errorf("the map at revision %d has %d custom resource paths, want 60", rev, got)
	}

	// A name RESOURCE.GROUP reads the CRD of that name only, when it is
	// established; a name in another form, or one a version of another
	// group may serve (thing8s.v1.g0.example), reads its groups' CRDs, found by
	// their keys; one no CRD of the group serves is looked for in all.
	for only, want := range map[string]int{
		"thing7s.g3.example":                    1,
		"thing8s.g0.example,thing7s.g3.example": 2 + 1,
		"thing8s.g0.example,thing7.g3.example":  20 + 10,
		"thing8s.v1.g0.example":                 20,
		"th7.g3.example,thing8.v1.g0.example":   10 + 20,
		"nosuch.g3.example":                     60,
	} {
		if got := len(open(only).Map.crds); got != want {
			t.Errorf("a map for %s has %d custom resource paths, want %d", only, got, want)
		}
	}

	// A manifest's objects are mapped by group and kind: writing them
	// reads the CRDs of the groups no built-in resource serves, and none
	// for built-in kinds.
	for kinds, want := range map[string]int{"v1/ConfigMap,apps/v1/Deployment": 0, "g2.example/v1/Thing2,v1/Secret": 20} {
		cfg := Config{Options: serverflags.NewOptions(), Timeout: 10 * time.Second}
		cfg.Options.Server.Etcd.StorageConfig.Transport.ServerList = []string{e.ClientURL}
		for _, k := range strings.Split(kinds, ",") {
			gv, kind := path.Split(k)
			cfg.Kinds = append(cfg.Kinds, schema.FromAPIVersionAndKind(strings.TrimSuffix(gv, "/"), kind))
		}
		s, err := Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(s.Map.crds); got != want {
			t.Errorf("a map for writing %s has %d custom resource paths, want %d", kinds, got, want)
		}
		s.Close()
	}

	one := open("thing7,thing8")
	h, err := one.Map.Resolve("th7")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := one.Map.ResolveKind(h.GroupVersion().WithKind("Thing7")); err != nil {
		t.Fatal(err)
	}
	if _, err := one.Map.Handle("thing8s.g0.example/status"); err != nil {
		t.Fatal(err)
	}
	if built := one.Map.BuiltCRDs(); !slices.Equal(built, []string{"thing7s.g3.example", "thing8s.g0.example"}) {
		t.Errorf("resolving thing7 twice and thing8's status built %v, want thing7s and thing8s once each", built)
	}
	if h.Serve != nil || h.Codec.Serializer == nil {
		t.Errorf("the resolved handle of %s cannot serve", h.Path)
	}
	if _, err := h.FieldManager(); err != nil {
		t.Errorf("the resolved handle of %s has no field manager: %v", h.Path, err)
	}
	if h.Store == nil || h.Store == all.Map.Handles[h.Path].Store {
		t.Errorf("the resolved handle of %s has not the served store", h.Path)
	}
}

// TestEstablishingWritesStatusOnly holds the establishing controllers,
// whose informer holds CRDs without their schemas, to what the server's do:
// they write status, and the CRD's spec, schemas included, and the fields
// its creator manages are as they were.
func TestEstablishingWritesStatusOnly(t *testing.T) {
	e, _ := liveEtcd(t)
	w := build(t, "--etcd-servers="+e.ClientURL)
	h := w.Map.Handles["customresourcedefinitions.apiextensions.k8s.io"]
	fm, err := h.FieldManager()
	if err != nil {
		t.Fatal(err)
	}
	v1 := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal([]byte(manyCRDs(1)[0]), v1); err != nil {
		t.Fatal(err)
	}
	crd := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsapiserver.Scheme.Convert(v1, crd, nil); err != nil {
		t.Fatal(err)
	}
	managed, err := fm.Create(crd, "creator")
	if err != nil {
		t.Fatal(err)
	}
	ctx := stores.RequestContext(context.Background(), handle.Target{Handle: h})
	created, err := h.Storage.(rest.Creater).Create(ctx, managed, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := created.(*apiextensions.CustomResourceDefinition)
	if err := w.EstablishCRDs(context.Background(), []string{crd.Name}); err != nil {
		t.Fatal(err)
	}
	got, err := h.Storage.(rest.Getter).Get(ctx, crd.Name, &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	after := got.(*apiextensions.CustomResourceDefinition)
	a, _ := json.Marshal(after.Spec)
	b, _ := json.Marshal(before.Spec)
	if !bytes.Contains(a, []byte(`"size"`)) || !bytes.Equal(a, b) {
		t.Errorf("establishing changed the CRD's spec:\n%s\nwant\n%s", a, b)
	}
	if !apiequality.Semantic.DeepEqual(after.ManagedFields[0], before.ManagedFields[0]) || len(after.ManagedFields) != 2 ||
		after.ManagedFields[1].Subresource != "status" {
		t.Errorf("managed fields after establishing: %+v; want the creator's as before, %+v, and the controllers' on status", after.ManagedFields, before.ManagedFields)
	}
	var established bool
	for _, c := range after.Status.Conditions {
		established = established || (c.Type == apiextensions.Established && c.Status == apiextensions.ConditionTrue)
	}
	if !established {
		t.Errorf("the CRD is not established: %+v", after.Status)
	}
}
