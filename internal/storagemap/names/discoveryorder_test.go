package names

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/regctl/regctl/internal/storagemap/served"
)

// TestDiscoveryRanksAreTheServersOrder: whatever order the map holds its
// versions in, the core group comes first, then the groups of /apis by
// the server's own priorities (read through the linkname), a group's
// versions by theirs, and a group the server has no priority for (a
// custom resource's) after every built-in one.
func TestDiscoveryRanksAreTheServersOrder(t *testing.T) {
	if _, ok := apiVersionPriorities[schema.GroupVersion{Group: "apps", Version: "v1"}]; !ok {
		t.Fatalf("kube-apiserver's priorities read through the linkname hold no apps/v1: %v", apiVersionPriorities)
	}
	gv := func(group, version string) schema.GroupVersion {
		return schema.GroupVersion{Group: group, Version: version}
	}
	var (
		custom   = gv("example.com", "v1")
		events   = gv("events.k8s.io", "v1")
		hpaV1    = gv("autoscaling", "v1")
		hpaV2    = gv("autoscaling", "v2")
		apps     = gv("apps", "v1")
		core     = gv("", "v1")
		versions []served.Version
		in       = []schema.GroupVersion{custom, events, hpaV1, hpaV2, apps, core}
	)
	for _, gv := range in {
		versions = append(versions, served.Version{GV: gv})
	}
	ranks, err := discoveryRanks(versions)
	if err != nil {
		t.Fatal(err)
	}
	if len(ranks) != len(in) {
		t.Fatalf("ranks %v, want one per version", ranks)
	}
	for _, before := range [][2]schema.GroupVersion{{core, apps}, {apps, events}, {events, hpaV2}, {hpaV2, hpaV1}, {hpaV1, custom}} {
		if ranks[before[0]] >= ranks[before[1]] {
			t.Errorf("%s ranks %d, %s %d: want the first listed first", before[0], ranks[before[0]], before[1], ranks[before[1]])
		}
	}
	if ranks[core] != 0 {
		t.Errorf("the core group ranks %d, want it first", ranks[core])
	}
}
