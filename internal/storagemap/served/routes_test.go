package served

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestRoutePathsAreKubectlsNames: resource.group for a preferred version,
// resource.version.group for the others, core resources by name, a
// subresource after its resource.
func TestRoutePathsAreKubectlsNames(t *testing.T) {
	for _, c := range []struct {
		v    Version
		p    string
		want string
	}{
		{Version{GV: schema.GroupVersion{Version: "v1"}, Preferred: true}, "pods/status", "pods/status"},
		{Version{GV: schema.GroupVersion{Group: "apps", Version: "v1"}, Preferred: true}, "deployments/scale", "deployments.apps/scale"},
		{Version{GV: schema.GroupVersion{Group: "autoscaling", Version: "v1"}}, "horizontalpodautoscalers", "horizontalpodautoscalers.v1.autoscaling"},
	} {
		if got := RoutePath(c.v, c.p); got != c.want {
			t.Errorf("RoutePath(%v, %s) = %s, want %s", c.v.GV, c.p, got, c.want)
		}
	}
}
