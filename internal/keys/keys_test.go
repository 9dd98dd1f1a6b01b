package keys

import (
	"bytes"
	"slices"
	"testing"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/target"
)

// TestParse checks keys' arguments and flags without an etcd.
func TestParse(t *testing.T) {
	shop := target.Scope{Namespace: "shop", AllFlag: true}
	for _, c := range []struct {
		args  []string
		scope target.Scope
		o     Options
		names []string
		usage bool
		want  string
	}{
		{args: nil, scope: shop, usage: true},
		{args: []string{"pods"}, scope: shop},
		{args: []string{"pods"}, scope: shop, o: Options{Revision: 4}},
		{args: []string{"pods/a", "pods/b"}, scope: shop, names: []string{"a", "b"}},
		{args: []string{"pods", "web"}, scope: target.Scope{AllNamespaces: true}, names: []string{"web"}},
		{args: nil, scope: shop, o: Options{Revision: 4}, want: "`--revision` lists a resource's keys or checks an object's as they were: name a resource, e.g. `keys pods --revision N`"},
		{args: []string{"pods"}, scope: target.Scope{AllFlag: true}, want: "`-n` is empty: name a namespace, or use `-A` for all namespaces"},
	} {
		ref, err := Parse(c.args, c.scope, c.o)
		switch {
		case c.want != "":
			if err == nil || err.Error() != c.want {
				t.Errorf("%v: %v, want %q", c.args, err, c.want)
			}
		case err != nil:
			t.Errorf("%v: %v", c.args, err)
		case c.usage != (ref == nil):
			t.Errorf("%v: %+v, want the usage of every resource: %v", c.args, ref, c.usage)
		case ref != nil && !slices.Equal(ref.Names, c.names):
			t.Errorf("%v: names %v, want %v", c.args, ref.Names, c.names)
		}
	}
}

func TestOptions(t *testing.T) {
	if err := (Options{ChunkSize: 0}).Validate(); err != nil {
		t.Errorf("--chunk-size 0 turns paging off: %v", err)
	}
	if err := (Options{ChunkSize: -1}).Validate(); err == nil || err.Error() != "`--chunk-size` must be 0 (no paging) or more, not -1" {
		t.Errorf("--chunk-size -1: %v", err)
	}
	for _, c := range []struct {
		names []string
		check bool
		want  bool
	}{
		{nil, false, true},
		{[]string{"web"}, false, false},
		{[]string{"web"}, true, true},
	} {
		if got := (Options{Check: c.check}).NeedsEtcd(c.names); got != c.want {
			t.Errorf("names %v, check %v: needs etcd %v, want %v", c.names, c.check, got, c.want)
		}
	}
}

// TestChecked prints --check's answers: one table for every key, one
// object for one key as data, a list for several; a missing key is an
// error naming each missing one.
func TestChecked(t *testing.T) {
	there := etcdview.KeyInfo{Key: "/registry/pods/shop/a", Exists: true, CreateRevision: 2, ModRevision: 3, Version: 2, Lease: "1f", ValueSize: 10}
	gone := etcdview.KeyInfo{Key: "/registry/pods/shop/b"}
	var out bytes.Buffer
	if err := render.Print(&out, render.Table, checked([]etcdview.KeyInfo{there, gone}, render.Table)); err != nil {
		t.Fatal(err)
	}
	want := "KEY                     EXISTS   CREATE REVISION   MOD REVISION   VERSION   LEASE   VALUE SIZE\n" +
		"/registry/pods/shop/a   true     2                 3              2         1f      10\n" +
		"/registry/pods/shop/b   false\n"
	if out.String() != want {
		t.Errorf("table:\n%q\nwant\n%q", out.String(), want)
	}
	if got := checked([]etcdview.KeyInfo{there}, render.JSON); got != any(there) {
		t.Errorf("one key as data: %#v", got)
	}
	if got, ok := checked([]etcdview.KeyInfo{there, gone}, render.YAML).([]etcdview.KeyInfo); !ok || len(got) != 2 {
		t.Errorf("keys as data: %#v", got)
	}
	if err := missing([]etcdview.KeyInfo{there}); err != nil {
		t.Errorf("every key there: %v", err)
	}
	if err := missing([]etcdview.KeyInfo{gone, there, {Key: "/registry/pods/shop/c"}}); err == nil || err.Error() != "no such key: /registry/pods/shop/b, /registry/pods/shop/c" {
		t.Errorf("missing keys: %v", err)
	}
}
