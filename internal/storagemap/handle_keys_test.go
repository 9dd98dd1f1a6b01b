package storagemap_test

import (
	"strings"
	"testing"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storagemap/maptest"
)

// A handle's keys are its store's, under --etcd-prefix: what every read
// and write of regctl that goes to etcd without the store computes. (The
// test of internal/handle lives here, beside the map that builds handles:
// its own test binary then links none of the server.)
func TestKeysAreTheStoresUnderTheEtcdPrefix(t *testing.T) {
	s, _ := maptest.Open(t)
	for _, tc := range []struct {
		path, namespace, name string
		key, prefix, all      string
	}{
		{"configmaps", "shop", "app", "/registry/configmaps/shop/app", "/registry/configmaps/shop/", "/registry/configmaps/"},
		{"namespaces", "", "shop", "/registry/namespaces/shop", "/registry/namespaces/", "/registry/namespaces/"},
		{"deployments.apps", "shop", "web", "/registry/deployments/shop/web", "/registry/deployments/shop/", "/registry/deployments/"},
		{"services", "shop", "web", "/registry/services/specs/shop/web", "/registry/services/specs/shop/", "/registry/services/specs/"},
	} {
		h := s.Map.Handles[tc.path]
		key, err := h.Key(tc.namespace, tc.name)
		if err != nil || key != tc.key {
			t.Errorf("%s: key of %s/%s is %q (%v), want %q", tc.path, tc.namespace, tc.name, key, err, tc.key)
		}
		if prefix, err := h.KeyPrefix(tc.namespace); err != nil || prefix != tc.prefix {
			t.Errorf("%s: prefix in %q is %q (%v), want %q", tc.path, tc.namespace, prefix, err, tc.prefix)
		}
		if all, err := h.KeyPrefix(""); err != nil || all != tc.all {
			t.Errorf("%s: prefix in every namespace is %q (%v), want %q", tc.path, all, err, tc.all)
		}
	}
	// A path with no store of its own names no key, and says why.
	notStored := &handle.Handle{Path: "selfsubjectreviews.authentication.k8s.io"}
	if _, err := notStored.Key("", "x"); err == nil || !strings.Contains(err.Error(), "selfsubjectreviews") {
		t.Errorf("a path that is not stored: %v", err)
	}
	if _, err := notStored.KeyPrefix(""); err == nil {
		t.Error("a path that is not stored has a key prefix")
	}
}
