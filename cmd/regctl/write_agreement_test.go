package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/kubernetes/test/integration/etcd"

	"github.com/regctl/regctl/test/apiserver"
)

// TestWritesAgreeWithKubeAPIServer writes with regctl into the etcd of a
// real kube-apiserver and checks what the apiserver then serves.
func TestWritesAgreeWithKubeAPIServer(t *testing.T) {
	s := apiserver.Start(t)
	etcdFlag := "--etcd-servers=" + s.EtcdURL
	ctx := context.Background()
	const ns = "regctl-writes"
	if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	discovery, err := s.Client.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]metav1.APIResource{}
	for _, r := range discovery.APIResources {
		served[r.Name] = r
	}

	t.Run("objects regctl creates are served as regctl printed them", func(t *testing.T) {
		created := 0
		for gvr, data := range etcd.GetEtcdStorageDataForNamespace(ns) {
			if gvr.Group != "" || gvr.Version != "v1" {
				continue
			}
			r := served[gvr.Resource]
			var obj map[string]any
			if err := json.Unmarshal([]byte(data.Stub), &obj); err != nil {
				t.Fatal(err)
			}
			obj["apiVersion"], obj["kind"] = "v1", r.Kind
			manifest, _ := json.Marshal(obj)
			stdout, stderr, code := run(t, "create", "-f", manifestFile(t, string(manifest)), "-n", ns, "-o", "json", etcdFlag)
			if code != 0 {
				t.Errorf("%s: exit %d: %s", gvr.Resource, code, stderr)
				continue
			}
			created++
			var printed struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			}
			if err := json.Unmarshal([]byte(stdout), &printed); err != nil {
				t.Fatal(err)
			}
			path := "/api/v1/" + gvr.Resource + "/" + printed.Metadata.Name
			if r.Namespaced {
				path = "/api/v1/namespaces/" + ns + "/" + gvr.Resource + "/" + printed.Metadata.Name
			}
			raw, err := s.Client.CoreV1().RESTClient().Get().AbsPath(path).SetHeader("Accept", "application/json").DoRaw(ctx)
			if err != nil {
				t.Errorf("%s: the apiserver cannot GET what regctl created: %v", gvr.Resource, err)
				continue
			}
			if got, want := normalize(t, []byte(stdout)), normalize(t, raw); got != want {
				t.Errorf("%s: regctl printed\n%s\nthe apiserver serves\n%s", gvr.Resource, got, want)
			}
		}
		if created != 15 {
			t.Errorf("created %d resources, want all 15 core resources with create", created)
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
