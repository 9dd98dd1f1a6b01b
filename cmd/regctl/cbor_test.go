package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/scan"
	"github.com/regctl/regctl/test/apiserver"
)

// cborTag is the self-described CBOR tag (0xd9d9f7) the apiserver's CBOR
// serializer starts every value with.
var cborTag = []byte{0xd9, 0xd9, 0xf7}

// TestCBORCustomResourcesAgreeWithKubeAPIServer runs a kube-apiserver with
// CBORServingAndStorage on, which stores custom resources as CBOR, and
// regctl with the same gate on the same etcd: regctl reads what the server
// stored as the server serves it, names the encoding, and writes CBOR the
// server serves. regctl runs as its own process: the test server sets its
// gates in this one.
func TestCBORCustomResourcesAgreeWithKubeAPIServer(t *testing.T) {
	const gate = "--feature-gates=CBORServingAndStorage=true"
	s := apiserver.Start(t, gate)
	apiserver.CreateWidgetsCRD(t, s)
	etcdFlag := "--etcd-servers=" + s.EtcdURL
	ctx := context.Background()
	createNamespace(t, s, "shop")
	if _, err := s.Dynamic.Resource(widgetsV1).Namespace("shop").Create(ctx, widget("v1", "alpha", map[string]any{"size": "large"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	etcd := etcdClient(t, s.EtcdURL)
	raw := func(key string) []byte {
		t.Helper()
		resp, err := etcd.Get(ctx, key)
		if err != nil || len(resp.Kvs) != 1 {
			t.Fatalf("reading %s: %v, %d values", key, err, len(resp.Kvs))
		}
		return resp.Kvs[0].Value
	}
	if v := raw("/registry/example.com/widgets/shop/alpha"); !bytes.HasPrefix(v, cborTag) {
		t.Fatalf("the server did not store the widget as CBOR: %q", v)
	}

	// Reads equal the server's GETs.
	stdout := mustRunBinary(t, "get", "widgets/alpha", "-n", "shop", "-o", "json", "--show-managed-fields", etcdFlag, gate)
	if got, want := normalize(t, []byte(stdout)), normalize(t, serverGET(t, s, "/apis/example.com/v1/namespaces/shop/widgets/alpha")); got != want {
		t.Errorf("regctl and the apiserver differ\nregctl:    %s\napiserver: %s", got, want)
	}
	// The server reads CBOR whatever its gate; so does regctl.
	if out := mustRunBinary(t, "get", "widgets/alpha", "-n", "shop", "-o", "jsonpath={.spec.size}", etcdFlag); out != "large" {
		t.Errorf("without the gate, regctl read spec.size %q", out)
	}

	// inspect and routes name the encoding.
	var info etcdview.ValueInfo
	if err := json.Unmarshal([]byte(mustRunBinary(t, "inspect", "widgets/alpha", "-n", "shop", "-o", "json", etcdFlag, gate)), &info); err != nil {
		t.Fatal(err)
	}
	if info.Encoding != "application/cbor" || info.StoredAPIVersion != "example.com/v1" || info.StoredKind != "Widget" || info.Problem != "" {
		t.Errorf("inspect: encoding %q, stored %s %s, problem %q; want application/cbor, example.com/v1 Widget", info.Encoding, info.StoredAPIVersion, info.StoredKind, info.Problem)
	}
	mediaTypes := func(flags ...string) map[string]string {
		var table routetable.RouteTable
		if err := json.Unmarshal([]byte(mustRunBinary(t, append([]string{"routes", "-o", "json", etcdFlag}, flags...)...)), &table); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, r := range table.Routes {
			out[r.Path] = r.MediaType
		}
		return out
	}
	if with, without := mediaTypes(gate), mediaTypes(); with["widgets.example.com"] != "application/cbor" || without["widgets.example.com"] != "application/json" || with["pods"] != "application/vnd.kubernetes.protobuf" {
		t.Errorf("widgets stored as %q with the gate, %q without, pods as %q; want application/cbor, application/json and protobuf", with["widgets.example.com"], without["widgets.example.com"], with["pods"])
	}

	// scan reads CBOR as the server does, with the gate or without, and
	// finds nothing wrong with what the server wrote.
	for _, flags := range [][]string{{gate}, nil} {
		var r scan.Report
		if err := json.Unmarshal([]byte(mustRunBinary(t, append([]string{"scan", "-o", "json", "--only", "encoding,versions,corrupt", etcdFlag}, flags...)...)), &r); err != nil {
			t.Fatal(err)
		}
		widgets := resourceOf(t, &r, "widgets.example.com", "")
		if widgets.Encoding.Counts["application/cbor"] != 1 || widgets.Versions.Counts["example.com/v1"] != 1 || r.FindingCounts[scan.Corrupt] != 0 {
			t.Errorf("scan %v: widgets %+v, %+v; findings %v", flags, widgets.Encoding, widgets.Versions, r.Findings)
		}
	}
	// What regctl writes with the gate is CBOR, and served.
	stdout = mustRunBinary(t, "create", "-f", manifestOf(t, widget("v1", "beta", map[string]any{"color": "blue"})), "-o", "json", etcdFlag, gate)
	if v := raw("/registry/example.com/widgets/shop/beta"); !bytes.HasPrefix(v, cborTag) {
		t.Errorf("regctl did not store the widget as CBOR: %q", v)
	}
	if printed, served := normalize(t, []byte(stdout)), normalize(t, serverGET(t, s, "/apis/example.com/v1/namespaces/shop/widgets/beta")); printed != served || !strings.Contains(served, `"color":"blue"`) {
		t.Errorf("regctl printed\n%s\nthe apiserver serves\n%s", printed, served)
	}
}
