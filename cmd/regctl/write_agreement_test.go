package main

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/kubernetes/test/integration/etcd"

	"github.com/regctl/regctl/test/apiserver"
)

// TestWritesAgreeWithKubeAPIServer writes with regctl into the etcd of a
// real kube-apiserver and checks what the apiserver then serves.
func TestWritesAgreeWithKubeAPIServer(t *testing.T) {
	t.Parallel()
	s := apiserver.Start(t)
	etcdFlag := "--etcd-servers=" + s.EtcdURL
	ctx := context.Background()
	const ns = "regctl-writes"
	if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	served := servedResources(t, s)

	t.Run("objects regctl creates are served as regctl printed them, every group", func(t *testing.T) {
		created, refused, groups := 0, 0, map[string]bool{}
		for gvr, data := range etcd.GetEtcdStorageDataForNamespace(ns) {
			r, ok := served[gvr]
			if !ok || !slices.Contains(r.Verbs, "create") || gvr.Group == "apiextensions.k8s.io" || gvr.Group == "apiregistration.k8s.io" {
				continue
			}
			apiserver.CreatePrerequisites(t, s, ns, data)
			var obj map[string]any
			if err := json.Unmarshal([]byte(data.Stub), &obj); err != nil {
				t.Fatal(err)
			}
			obj["apiVersion"], obj["kind"] = gvr.GroupVersion().String(), r.Kind
			manifest, _ := json.Marshal(obj)
			stdout, stderr, code := run(t, "create", "-f", manifestFile(t, string(manifest)), "-n", ns, "-o", "json", etcdFlag)
			if code != 0 && strings.Contains(stderr, "strict decoding error") {
				// Some of upstream's stubs carry unknown fields. regctl
				// decodes strictly, as kubectl asks the server to: the
				// server must refuse them too.
				refusesTooStrictly(t, s, o(gvr, r, ns, ""), manifest, stderr)
				refused++
				groups[gvr.Group] = true
				continue
			}
			if code != 0 {
				t.Errorf("%s: exit %d: %s", gvr, code, stderr)
				continue
			}
			created++
			groups[gvr.Group] = true
			var printed struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			}
			if err := json.Unmarshal([]byte(stdout), &printed); err != nil {
				t.Fatal(err)
			}
			path := o(gvr, r, ns, printed.Metadata.Name).Path()
			raw, err := s.Client.CoreV1().RESTClient().Get().AbsPath(path).SetHeader("Accept", "application/json").DoRaw(ctx)
			if err != nil {
				t.Errorf("%s: the apiserver cannot GET what regctl created: %v", gvr, err)
				continue
			}
			if got, want := normalize(t, []byte(stdout)), normalize(t, raw); got != want && !changedSince(t, []byte(stdout), raw) {
				t.Errorf("%s: regctl printed\n%s\nthe apiserver serves\n%s", gvr, got, want)
			}
		}
		if created+refused < storageDataObjects || len(groups) < 17 {
			t.Errorf("created %d and refused %d objects of %d groups, want one per resource with create a default server serves in upstream's data", created, refused, len(groups))
		}
	})

	t.Run("client-go updates an object regctl created", func(t *testing.T) {
		mustRun(t, "create", "-f", manifestFile(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: by-regctl}\ndata: {k: v}\n"), "-n", ns, etcdFlag)
		cm, err := s.Client.CoreV1().ConfigMaps(ns).Get(ctx, "by-regctl", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cm.Data["k"] = "changed by client-go"
		if _, err := s.Client.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("client-go update: %v", err)
		}
		if got := mustRun(t, "get", "configmaps/by-regctl", "-n", ns, "-o", "yaml", etcdFlag); !strings.Contains(got, "changed by client-go") {
			t.Errorf("regctl reads:\n%s", got)
		}
	})

	t.Run("regctl replaces an object the apiserver created", func(t *testing.T) {
		if _, err := s.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "by-server"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		current := mustRun(t, "get", "configmaps/by-server", "-n", ns, "-o", "yaml", "--show-managed-fields", etcdFlag)
		mustRun(t, "replace", "-f", manifestFile(t, strings.Replace(current, "k: v", "k: replaced by regctl", 1)), etcdFlag)
		// The watch cache catches up asynchronously; a quorum read does not wait.
		cm, err := s.Client.CoreV1().ConfigMaps(ns).Get(ctx, "by-server", metav1.GetOptions{})
		if err != nil || cm.Data["k"] != "replaced by regctl" {
			t.Errorf("the apiserver serves %v (%v)", cm.Data, err)
		}
	})

	t.Run("a watch through the apiserver sees regctl's writes", func(t *testing.T) {
		watcher, err := s.Client.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=watched"})
		if err != nil {
			t.Fatal(err)
		}
		defer watcher.Stop()
		mustRun(t, "create", "-f", manifestFile(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: watched}\ndata: {k: v1}\n"), "-n", ns, etcdFlag)
		current := mustRun(t, "get", "configmaps/watched", "-n", ns, "-o", "yaml", etcdFlag)
		mustRun(t, "replace", "-f", manifestFile(t, strings.Replace(current, "k: v1", "k: v2", 1)), etcdFlag)
		mustRun(t, "delete", "configmaps/watched", "-n", ns, etcdFlag)
		var got []watch.EventType
		timeout := time.After(30 * time.Second)
		for len(got) < 3 {
			select {
			case ev := <-watcher.ResultChan():
				got = append(got, ev.Type)
			case <-timeout:
				t.Fatalf("watch saw %v, want ADDED, MODIFIED, DELETED", got)
			}
		}
		if got[0] != watch.Added || got[1] != watch.Modified || got[2] != watch.Deleted {
			t.Errorf("watch saw %v, want ADDED, MODIFIED, DELETED", got)
		}
	})
}

// servedResources is the server's discovery of every group version.
func servedResources(t *testing.T, s *apiserver.Server) map[schema.GroupVersionResource]metav1.APIResource {
	t.Helper()
	_, lists, err := s.Client.Discovery().ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	out := map[schema.GroupVersionResource]metav1.APIResource{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.APIResources {
			out[gv.WithResource(r.Name)] = r
		}
	}
	return out
}

// o is the object name of resource r in namespace ns, if r is namespaced.
func o(gvr schema.GroupVersionResource, r metav1.APIResource, ns, name string) apiserver.Object {
	obj := apiserver.Object{GVR: gvr, Name: name}
	if r.Namespaced {
		obj.Namespace = ns
	}
	return obj
}

// refusesTooStrictly checks that the server, asked for strict field
// validation as kubectl asks it, refuses the manifest regctl refused.
func refusesTooStrictly(t *testing.T, s *apiserver.Server, obj apiserver.Object, manifest []byte, regctl string) {
	t.Helper()
	collection := strings.TrimSuffix(obj.Path(), "/")
	err := s.Client.CoreV1().RESTClient().Post().AbsPath(collection).Param("fieldValidation", "Strict").Param("dryRun", "All").
		Body(manifest).SetHeader("Content-Type", "application/json").Do(context.Background()).Error()
	if err == nil || !strings.Contains(err.Error(), "strict decoding error") {
		t.Errorf("%s: regctl refuses %s\nbut the server with fieldValidation=Strict says %v", obj.GVR, regctl, err)
	}
}

// changedSince tells whether the server's copy was written again after
// regctl's create (a controller of the server's, such as flow control's,
// writes status) with the same spec: then the two are not expected equal.
func changedSince(t *testing.T, regctl, server []byte) bool {
	t.Helper()
	var a, b struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
		Spec     any               `json:"spec"`
	}
	if json.Unmarshal(regctl, &a) != nil || json.Unmarshal(server, &b) != nil {
		return false
	}
	return a.Metadata.ResourceVersion != b.Metadata.ResourceVersion && a.Metadata.UID == b.Metadata.UID && reflect.DeepEqual(a.Spec, b.Spec)
}
