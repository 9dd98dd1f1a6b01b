package scan

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/logs/logstest"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/storagemap/maptest"
	"github.com/regctl/regctl/internal/stores"
)

func TestMain(m *testing.M) { logstest.Main(m) }

// keyspace is the keyspace of s, whose client is main.
func keyspace(s *storagemap.Session, main *clientv3.Client) handle.Keyspace {
	return handle.Keyspace{Client: main, EtcdPrefix: s.Map.Table.EtcdPrefix, Handles: s.Map.Ordered()}
}

// failOnOneOrphan scans the orphans of s's etcd with --fail-on orphans,
// wants it to fail for one finding once the report is printed, and
// returns the report.
func failOnOneOrphan(t *testing.T, s *storagemap.Session, main *clientv3.Client) Report {
	t.Helper()
	r := Request{Output: render.JSON, Only: []string{Orphans}, FailOn: []string{Orphans}, ChunkSize: DefaultPageSize}
	var out bytes.Buffer
	err := Scan(context.Background(), keyspace(s, main), r, genericiooptions.IOStreams{Out: &out, ErrOut: io.Discard})
	if err == nil || err.Error() != "the scan found 1 orphans finding" {
		t.Errorf("--fail-on orphans: %v", err)
	}
	var report Report
	if err := json.Unmarshal(out.Bytes(), &report); err != nil {
		t.Fatalf("the report is printed before the scan fails: %v\n%s", err, out.String())
	}
	return report
}

// TestScanOnAMap scans the etcd of a default server's map, with a key no
// path stores: it is an orphan, which fails the scan with --fail-on
// orphans once the report is printed, and passes it without.
func TestScanOnAMap(t *testing.T) {
	ctx := context.Background()
	s, main := maptest.Open(t)
	if _, err := main.Put(ctx, "/registry/widgets.example.com/shop/w", "{}"); err != nil {
		t.Fatal(err)
	}
	report := failOnOneOrphan(t, s, main)
	if len(report.Orphans) != 1 || report.Orphans[0].Keys != 1 {
		t.Errorf("orphans %+v", report.Orphans)
	}
	r := Request{Output: render.JSON, Only: []string{Orphans}, ChunkSize: DefaultPageSize}
	if err := Scan(ctx, keyspace(s, main), r, genericiooptions.IOStreams{Out: io.Discard, ErrOut: io.Discard}); err != nil {
		t.Errorf("without --fail-on: %v", err)
	}
	r.Revision = -1
	if err := Scan(ctx, keyspace(s, main), r, genericiooptions.IOStreams{Out: io.Discard, ErrOut: io.Discard}); err == nil || err.Error() != "invalid `--revision` -1: etcd revisions start at 1" {
		t.Errorf("a negative revision: %v", err)
	}
}

// TestAGateNeverPassesOnValuesItCouldNotRead scans secrets encrypted with
// a key no config is given for: their versions cannot be told, the verdict
// says so, and --fail-on versions fails; --fail-on encryption fails on
// them as findings of the key missing.
func TestAGateNeverPassesOnValuesItCouldNotRead(t *testing.T) {
	ctx := context.Background()
	s, main := maptest.Open(t)
	for _, name := range []string{"a", "b"} {
		if _, err := main.Put(ctx, "/registry/secrets/shop/"+name, "k8s:enc:aescbc:v1:key1:\x00\x01ciphertext"); err != nil {
			t.Fatal(err)
		}
	}
	for _, kind := range []string{Versions, Encryption} {
		r := Request{Output: render.JSON, Only: []string{kind}, FailOn: []string{kind}, ChunkSize: DefaultPageSize}
		var out bytes.Buffer
		err := Scan(ctx, keyspace(s, main), r, genericiooptions.IOStreams{Out: &out, ErrOut: io.Discard})
		want := "the scan found 2 values it could not read, so cannot tell their " + kind
		if kind == Encryption {
			want = "the scan found 2 encryption findings"
		}
		if err == nil || err.Error() != want {
			t.Errorf("--only %s --fail-on %s: %v, want %q", kind, kind, err, want)
		}
		var report Report
		if err := json.Unmarshal(out.Bytes(), &report); err != nil {
			t.Fatal(err)
		}
		if kind != Versions {
			continue
		}
		if len(report.Resources) != 1 || report.Resources[0].Versions.Unread != 2 || report.Resources[0].Versions.Verdict != "cannot tell: 2 values could not be read (`--only encryption,corrupt` lists them)" {
			t.Errorf("secrets: %+v", report.Resources)
		}
	}
}

// TestObjectsInANamespaceThatIsGoneAreFound scans objects of a namespace
// whose Namespace object is gone: a finding per resource and namespace,
// and none for a namespace that exists.
func TestObjectsInANamespaceThatIsGoneAreFound(t *testing.T) {
	ctx := context.Background()
	s, main := maptest.Open(t)
	create := func(path string, obj runtime.Object, namespace string) {
		t.Helper()
		rctx := stores.RequestContext(context.Background(), handle.Target{Handle: s.Map.Handles[path], Namespace: namespace})
		if _, err := s.Map.Handles[path].Storage.(rest.Creater).Create(rctx, obj, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("namespaces", &api.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "here"}}, "")
	for _, ns := range []string{"here", "gone"} {
		for _, name := range []string{"a", "b"} {
			create("configmaps", &api.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}, ns)
		}
	}
	report := failOnOneOrphan(t, s, main)
	want := []Finding{{Kind: Orphans, Reason: ReasonNamespaceGone, Resource: "configmaps", Key: "/registry/configmaps/gone/",
		Detail: "2 objects in namespace gone, which does not exist: left by a namespace deleted without its objects"}}
	if !reflect.DeepEqual(report.Findings, want) {
		t.Errorf("findings %+v, want %+v", report.Findings, want)
	}
	var table bytes.Buffer
	r := Request{Output: render.Table, Only: []string{Orphans}, ChunkSize: DefaultPageSize}
	if err := Scan(ctx, keyspace(s, main), r, genericiooptions.IOStreams{Out: &table, ErrOut: io.Discard}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "/registry/configmaps/gone/") {
		t.Errorf("the table does not list the finding:\n%s", table.String())
	}
}

// TestEveryChunkSizeReadsEveryKey scans the same keys in pages of one, a
// few, the default, and all at once (--chunk-size=0, as kubectl's): each
// reads every key once.
func TestEveryChunkSizeReadsEveryKey(t *testing.T) {
	ctx := context.Background()
	s, main := maptest.Open(t)
	for i := range 25 {
		if _, err := main.Put(ctx, fmt.Sprintf("/registry/widgets.example.com/shop/w%02d", i), "{}"); err != nil {
			t.Fatal(err)
		}
	}
	for _, size := range []int64{1, 7, DefaultPageSize, 0} {
		r := Request{Output: render.JSON, Only: []string{Orphans}, ChunkSize: size}
		var out bytes.Buffer
		if err := Scan(ctx, keyspace(s, main), r, genericiooptions.IOStreams{Out: &out, ErrOut: io.Discard}); err != nil {
			t.Fatalf("--chunk-size=%d: %v", size, err)
		}
		var report Report
		if err := json.Unmarshal(out.Bytes(), &report); err != nil {
			t.Fatal(err)
		}
		if len(report.Orphans) != 1 || report.Orphans[0].Keys != 25 {
			t.Errorf("--chunk-size=%d: orphans %+v, want 25 keys", size, report.Orphans)
		}
	}
}
