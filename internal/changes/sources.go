package changes

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/routetable"
)

// Source is one side as the command line names it: live (the etcd the
// flags name, now), rev:N (that etcd at revision N) or a snapshot file.
type Source struct {
	Name     string
	Revision int64
	Snapshot string
}

// ParseSource reads --from and --to.
func ParseSource(s string) (Source, error) {
	switch {
	case s == "live":
		return Source{Name: s}, nil
	case strings.HasPrefix(s, "rev:"):
		rev, err := strconv.ParseInt(strings.TrimPrefix(s, "rev:"), 10, 64)
		if err != nil || rev <= 0 {
			return Source{}, fmt.Errorf("%q names no revision: rev:N takes a revision above 0", s)
		}
		return Source{Name: s, Revision: rev}, nil
	case s == "":
		return Source{}, fmt.Errorf("an empty source: give live, rev:N or a snapshot file")
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
