package changes

import (
	"fmt"
	"strings"

	"github.com/regctl/regctl/internal/clock"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/routetable"
)

// Source is one side as the command line names it: live (the etcd the
// flags name, now), rev:N (that etcd at revision N), rev:TIME (at the
// revision of a time, told when the side is opened) or a snapshot file.
type Source struct {
	Name     string
	Revision int64
	// Time is the time rev:TIME names; Revision is 0 until it is told.
	Time     clock.Time
	Snapshot string
}

// ParseSource reads --from and --to.
func ParseSource(s string) (Source, error) {
	switch {
	case s == "live":
		return Source{Name: s}, nil
	case strings.HasPrefix(s, "rev:"):
		rev, at, err := clock.ParseRevision(strings.TrimPrefix(s, "rev:"))
		if err != nil || at.IsZero() && rev <= 0 {
			return Source{}, fmt.Errorf("%q names no revision: rev:N takes a revision above 0, rev:TIME an RFC 3339 time (rev:2026-11-29T14:00:00Z) or an age (rev:90m)", s)
		}
		return Source{Name: s, Revision: rev, Time: at}, nil
	case s == "":
		return Source{}, fmt.Errorf("an empty source: give live, rev:N, rev:TIME or a snapshot file")
	}
	return Source{Name: s, Snapshot: s}, nil
}

// Stored are the targets of every resource the handles store, in
// namespace (all when empty), each key prefix once: several paths of one
// resource (two versions) store under the same one.
func Stored(handles []*handle.Handle, namespace string) []handle.Target {
	var out []handle.Target
	seen := map[string]bool{}
	for _, h := range handles {
		if h.Route.Store != routetable.StoreOwn || h.OwnStore() == nil || h.Route.Subresource != "" {
			continue
		}
		prefix, err := h.KeyPrefix("")
		if err != nil || seen[prefix] {
			continue
		}
		seen[prefix] = true
		t := handle.Target{Handle: h}
		if h.Resource.Namespaced {
			t.Namespace = namespace
		}
		out = append(out, t)
	}
	return out
}

// PairTargets pairs the two sides' targets by path: the to side's in its
// order, then those only the from side has. names, by path, are the only
// objects of that resource compared (all when none).
func PairTargets(from, to []handle.Target, names map[string][]string) []Pair {
	byPath := map[string]*handle.Target{}
	for i := range from {
		byPath[from[i].Path] = &from[i]
	}
	var out []Pair
	for i := range to {
		p := Pair{Resource: to[i].Path, To: &to[i], From: byPath[to[i].Path], Names: names[to[i].Path]}
		delete(byPath, to[i].Path)
		out = append(out, p)
	}
	for i := range from {
		if t, ok := byPath[from[i].Path]; ok {
			out = append(out, Pair{Resource: t.Path, From: t, Names: names[t.Path]})
		}
	}
	return out
}
