package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"k8s.io/kubernetes/test/integration/etcd"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/test/apiserver"
)

// TestReadsAgreeWithKubeAPIServer creates objects through a real
// kube-apiserver and reads them back with regctl from the same etcd.
func TestReadsAgreeWithKubeAPIServer(t *testing.T) {
	t.Parallel()
	s := apiserver.Start(t)
	etcdFlag := "--etcd-servers=" + s.EtcdURL
	ctx := context.Background()

	objs := apiserver.CreateObjects(t, s, "regctl-agree", func(gvr schema.GroupVersionResource) bool {
		return gvr.Group != "apiextensions.k8s.io" && gvr.Group != "apiregistration.k8s.io"
	})
	groups := map[string]bool{}
	for _, o := range objs {
		groups[o.GVR.Group] = true
	}
	if len(objs) < storageDataObjects || len(groups) < 17 {
		t.Fatalf("created %d objects of %d groups, want one per resource a default server serves in upstream's data", len(objs), len(groups))
	}
	t.Run("get -o json equals the apiserver's GET, every group", func(t *testing.T) {
		for _, o := range objs {
			args := []string{"get", o.Arg(), "-o", "json", "--show-managed-fields", etcdFlag}
			if o.Namespace != "" {
				args = append(args, "-n", o.Namespace)
			}
			stdout, stderr, code := run(t, args...)
			if code != 0 {
				t.Errorf("%s: exit %d: %s", o.GVR, code, stderr)
				continue
			}
			raw, err := s.Client.CoreV1().RESTClient().Get().AbsPath(o.Path()).SetHeader("Accept", "application/json").DoRaw(ctx)
			if err != nil {
				t.Fatalf("GET %s: %v", o.Path(), err)
			}
			if got, want := normalize(t, []byte(stdout)), normalize(t, raw); got != want {
				t.Errorf("%s: regctl and the apiserver differ\nregctl:    %s\napiserver: %s", o.GVR, got, want)
			}
		}
	})

	t.Run("keys and inspect find every group's object where upstream says it is stored", func(t *testing.T) {
		data := etcd.GetEtcdStorageDataForNamespace("regctl-agree")
		for _, o := range objs {
			args := []string{o.Arg(), etcdFlag}
			if o.Namespace != "" {
				args = append(args, "-n", o.Namespace)
			}
			if key := strings.TrimSpace(mustRun(t, append([]string{"keys"}, args...)...)); key != o.ExpectedEtcdPath {
				t.Errorf("%s: keys says %s, upstream expects %s", o.GVR, key, o.ExpectedEtcdPath)
			}
			var info struct {
				Key              string `json:"key"`
				StoredAPIVersion string `json:"storedAPIVersion"`
			}
			if err := json.Unmarshal([]byte(mustRun(t, append([]string{"inspect", "-o", "json"}, args...)...)), &info); err != nil {
				t.Fatal(err)
			}
			want := o.GVR.GroupVersion().String()
			if d := data[o.GVR]; d.ExpectedGVK != nil {
				want = d.ExpectedGVK.GroupVersion().String()
			}
			if info.Key != o.ExpectedEtcdPath || info.StoredAPIVersion != want {
				t.Errorf("%s: inspect finds %s stored as %s, upstream expects %s as %s", o.GVR, info.Key, info.StoredAPIVersion, o.ExpectedEtcdPath, want)
			}
		}
	})

	// Pods across two namespaces, on two nodes, with two labels.
	for i := 0; i < 6; i++ {
		ns := fmt.Sprintf("team-%d", i%2)
		if i < 2 {
			if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), Labels: map[string]string{"app": []string{"web", "db"}[i%3/2]}},
			Spec: corev1.PodSpec{
				NodeName:   fmt.Sprintf("node-%d", i%2),
				Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			},
		}
		if _, err := s.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("get pods -A equals the server's table", func(t *testing.T) {
		var got, want string
		// AGE is computed at print time on both sides; retry if a second
		// ticks over between the two reads.
		for attempt := 0; attempt < 3; attempt++ {
			stdout, stderr, code := run(t, "get", "pods", "-A", etcdFlag)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			got, want = stdout, serverTable(t, s, "/api/v1/pods")
			if got == want {
				return
			}
		}
		t.Errorf("regctl:\n%s\napiserver:\n%s", got, want)
	})

	t.Run("keys counts equal what the apiserver lists", func(t *testing.T) {
		// The server's own controllers write now and then; retry on churn.
		var diffs []string
		for attempt := 0; attempt < 3; attempt++ {
			if diffs = keysAgree(t, s, etcdFlag); len(diffs) == 0 {
				return
			}
		}
		t.Error(strings.Join(diffs, "; "))
	})

	t.Run("selectors select what the server selects", func(t *testing.T) {
		for _, sel := range []struct{ label, field string }{
			{label: "app=web"},
			{label: "app!=web"},
			{field: "spec.nodeName=node-1"},
			{field: "metadata.name=web-3"},
			{field: "status.phase=Pending"},
			{label: "app=db", field: "spec.nodeName=node-0"},
		} {
			list, err := s.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: sel.label, FieldSelector: sel.field})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, p := range list.Items {
				want = append(want, "pod/"+p.Name)
			}
			stdout, stderr, code := run(t, "get", "pods", "-A", "-o", "name", "-l", sel.label, "--field-selector", sel.field, etcdFlag)
			if code != 0 {
				t.Fatalf("%+v: exit %d: %s", sel, code, stderr)
			}
			got := strings.Fields(stdout)
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%+v: regctl selects %v, the server %v", sel, got, want)
			}
		}
	})
}

// keysAgree compares `regctl keys` with the number of objects the
// apiserver lists for each resource with a store.
func keysAgree(t *testing.T, s *apiserver.Server, etcdFlag string) []string {
	stdout, stderr, code := run(t, "keys", "-o", "json", etcdFlag)
	if code != 0 {
		t.Fatalf("keys: exit %d: %s", code, stderr)
	}
	var usage []etcdview.Usage
	if err := json.Unmarshal([]byte(stdout), &usage); err != nil {
		t.Fatal(err)
	}
	var table routetable.RouteTable
	if err := json.Unmarshal([]byte(mustRun(t, "routes", "-o", "json")), &table); err != nil {
		t.Fatal(err)
	}
	routes, prefixes := map[string]routetable.Route{}, map[string]bool{}
	for _, r := range table.Routes {
		routes[r.Path] = r
		if r.Store == routetable.StoreOwn {
			prefixes[r.KeyPrefix] = true
		}
	}
	var diffs []string
	seen := 0
	for _, u := range usage {
		if u.Resource == "" {
			continue
		}
		seen++
		r := routes[u.Resource]
		gvr := schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Resource}
		list, err := s.Dynamic.Resource(gvr).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatalf("listing %s: %v", u.Resource, err)
		}
		if int64(len(list.Items)) != u.Keys {
			diffs = append(diffs, fmt.Sprintf("%s: regctl counts %d keys, the apiserver lists %d", u.Resource, u.Keys, len(list.Items)))
		}
	}
	if seen != len(prefixes) {
		t.Fatalf("keys shows %d resources, want the %d key prefixes of the map's stores", seen, len(prefixes))
	}
	return diffs
}

// serverTable reads a list as the server's Table and prints it the way
// regctl prints tables, so the comparison is cell for cell.
func serverTable(t *testing.T, s *apiserver.Server, path string) string {
	t.Helper()
	raw, err := s.Client.CoreV1().RESTClient().Get().AbsPath(path).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	for i, row := range table.Rows {
		var m metav1.PartialObjectMetadata
		if err := json.Unmarshal(row.Object.Raw, &m); err != nil {
			t.Fatal(err)
		}
		table.Rows[i].Object.Object = &m
	}
	out := &render.ObjectTable{WithNamespace: true}
	out.Append(&table)
	var b strings.Builder
	if err := render.Print(&b, render.Table, out); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// normalize re-encodes JSON with sorted keys and no insignificant space.
func normalize(t *testing.T, data []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("not json: %v: %s", err, data)
	}
	out, _ := json.Marshal(v)
	return string(out)
}
