package etcdview

import (
	"context"
	"fmt"
	"testing"

	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/regctl/regctl/internal/etcdview/etcdtest"
)

// TestClaimsGroup: a key counts for the longest prefix that claims it;
// unclaimed keys under the root by their next segment; keys outside it in
// no group.
func TestClaimsGroup(t *testing.T) {
	c := NewClaims("/registry/", map[string]string{
		"/registry/services/specs/":     "services",
		"/registry/services/":           "short",
		"/registry/services/endpoints/": "endpoints",
	})
	for key, want := range map[string][2]string{
		"/registry/services/specs/ns/web":     {"/registry/services/specs/", "services"},
		"/registry/services/endpoints/ns/web": {"/registry/services/endpoints/", "endpoints"},
		"/registry/services/other":            {"/registry/services/", "short"},
		"/registry/ranges/serviceips":         {"/registry/ranges/", ""},
		"/registry/health":                    {"/registry/health", ""},
		"/other/key":                          {"", ""},
	} {
		if prefix, resource := c.Group(key); prefix != want[0] || resource != want[1] {
			t.Errorf("%s: %q, %q; want %q", key, prefix, resource, want)
		}
	}
}

// TestUsageWalkVisitsEachKey: a walk's visitor is told of every key once,
// with the usage it counts in, and the usage adds up what it was told.
func TestUsageWalkVisitsEachKey(t *testing.T) {
	_, c := etcdtest.Start(t)
	ctx := context.Background()
	for i := range 7 {
		if _, err := c.Put(ctx, fmt.Sprintf("/registry/configmaps/a/%d", i), fmt.Sprint(i*100)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Put(ctx, "/registry/ranges/serviceips", "range"); err != nil {
		t.Fatal(err)
	}
	told := map[string]Usage{}
	visit := func(kv *mvccpb.KeyValue, u *Usage) error {
		v := told[u.KeyPrefix]
		v.Resource = u.Resource
		v.Keys++
		v.Bytes += int64(len(kv.Value))
		told[u.KeyPrefix] = v
		return nil
	}
	usage, err := UsageUnderWalk(ctx, c, "/registry/", map[string]string{"/registry/configmaps/": "configmaps", "/registry/secrets/": "secrets"}, UsageWalk{PageSize: 2, Visit: visit})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint([]Usage{
		{Resource: "configmaps", KeyPrefix: "/registry/configmaps/", Keys: 7, Bytes: 1 + 6*3},
		{Resource: "secrets", KeyPrefix: "/registry/secrets/"},
		{KeyPrefix: "/registry/ranges/", Keys: 1, Bytes: 5},
	})
	if fmt.Sprint(usage) != want {
		t.Errorf("usage %v, want %s", usage, want)
	}
	for _, u := range usage {
		if v := told[u.KeyPrefix]; v.Keys != u.Keys || v.Bytes != u.Bytes || v.Keys > 0 && v.Resource != u.Resource {
			t.Errorf("%s: told of %+v, counted %+v", u.KeyPrefix, v, u)
		}
	}
}
