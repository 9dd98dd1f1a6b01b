package storagemap

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storagemap/extensions"
)

// Resolve finds the handle of the resource a user means by name, as
// kubectl does, with kubectl's own RESTMapper on the server's discovery:
// plural, singular or kind name in any case, short names,
// resource.group and resource.version.group. Subresources are not matched:
// they are named through their resource.
func (m *Map) Resolve(name string) (*handle.Handle, error) {
	gvr, err := m.resourceFor(name)
	if err != nil {
		msg := fmt.Sprintf("unknown resource %q", name)
		if close := m.closeNames(strings.ToLower(name)); len(close) > 0 {
			msg += fmt.Sprintf(": did you mean %s?", strings.Join(close, " or "))
		}
		return nil, fmt.Errorf("%s (see `regctl routes`)", msg)
	}
	return m.handleOf(gvr)
}

// ResolveList resolves a comma-separated list of resources, with kubectl's
// categories (`all`) expanded, in the order given and without repeats.
func (m *Map) ResolveList(names string) ([]*handle.Handle, error) {
	var out []*handle.Handle
	seen := map[string]bool{}
	for _, name := range strings.Split(names, ",") {
		if name == "" {
			return nil, fmt.Errorf("%q: an empty resource name in the list", names)
		}
		var handles []*handle.Handle
		names, _ := m.expand(name)
		for _, n := range names {
			h, err := m.Resolve(n)
			if err != nil {
				return nil, err
			}
			handles = append(handles, h)
		}
		for _, h := range handles {
			if !seen[h.Path] {
				seen[h.Path] = true
				out = append(out, h)
			}
		}
	}
	return out, nil
}

// RESTMapper is the mapper Resolve and ResolveKind map names with:
// kubectl's, on the server's discovery of the map.
func (m *Map) RESTMapper() meta.RESTMapper { return m.mapper }

// ResolveKind finds the handle of the resource whose objects are of kind
// gvk, as kubectl maps a manifest's apiVersion and kind.
func (m *Map) ResolveKind(gvk schema.GroupVersionKind) (*handle.Handle, error) {
	mapping, err := m.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	return m.handleOf(mapping.Resource)
}

// needed is what of the map a command touches: by version, the resources
// to install, nil for a whole version. A command on the resources named in
// cfg.Only (a comma-separated list as `get` takes it) touches those; one
// that writes a manifest, the resources of its cfg.Kinds and namespaces,
// which its writes look their namespace up through. Every version is whole
// when neither is given or a name or kind does not resolve, so that errors
// and suggestions are the full map's. What a write's stores or kubectl's
// requests reach beyond that, the loopback installs when they reach it
// (servingInstalled).
func (m *Map) needed(cfg Config) map[schema.GroupVersion][]string {
	var gvrs []schema.GroupVersionResource
	switch {
	case cfg.Only != "":
		for _, name := range strings.Split(cfg.Only, ",") {
			names, _ := m.expand(name)
			for _, n := range names {
				gvr, err := m.resourceFor(n)
				if err != nil {
					return m.whole()
				}
				gvrs = append(gvrs, gvr)
			}
		}
	case cfg.Kinds != nil:
		gvrs = append(gvrs, corev1.SchemeGroupVersion.WithResource("namespaces"))
		for _, k := range cfg.Kinds {
			mapping, err := m.mapper.RESTMapping(k.GroupKind(), k.Version)
			if err != nil {
				return m.whole()
			}
			gvrs = append(gvrs, mapping.Resource)
		}
	default:
		return m.whole()
	}
	need := map[schema.GroupVersion][]string{}
	for _, gvr := range gvrs {
		if !slices.Contains(need[gvr.GroupVersion()], gvr.Resource) {
			need[gvr.GroupVersion()] = append(need[gvr.GroupVersion()], gvr.Resource)
		}
	}
	return need
}

// whole is every version of the map, each whole.
func (m *Map) whole() map[schema.GroupVersion][]string {
	need := map[schema.GroupVersion][]string{}
	for _, v := range m.versions {
		need[v.GV] = nil
	}
	return need
}

// resolvesAll tells whether every name in only (comma-separated) resolves
// to a resource of the map as built so far, none through a category (which
// custom resources may join).
func (m *Map) resolvesAll(only string) bool {
	for _, name := range strings.Split(only, ",") {
		if _, category := m.expand(name); category {
			return false
		}
		if _, err := m.resourceFor(name); err != nil {
			return false
		}
	}
	return true
}

// crdsNeeded says, from the built-in map, whether a command on cfg.Only or
// cfg.Kinds reads the CRDs and APIServices in etcd, the CRDs it reads if
// they are established (nil: see groups), and the groups whose CRDs it
// reads otherwise (nil: all).
func (m *Map) crdsNeeded(cfg Config) (read bool, names, groups []string) {
	if cfg.Only == "" && cfg.Kinds != nil {
		groups = m.crdGroupsOfKinds(cfg.Kinds)
		return len(groups) > 0, nil, groups
	}
	names, groups = m.crdsOf(cfg.Only)
	return cfg.Only == "" || !m.resolvesAll(cfg.Only), names, groups
}

// crdsOf are the CRDs and the groups of CRDs that serve the resources
// named in only (comma-separated) that are not built-in, when each such
// name names its group, as kubectl reads resource.group,
// resource.version.group, shortname.group or kind.group: a group is what
// follows one of the name's first two dots. Groups are nil when every CRD
// is needed: a bare name, which any CRD's names may match, a category, or
// no names at all.
//
// The CRDs, RESOURCE.GROUP for each such name and group, are all a command
// needs when each is established: the apiextensions naming controller
// accepts no name of a CRD that another CRD of its group claims, so no
// other CRD of GROUP can serve RESOURCE. A group without a dot holds no
// CRD.
func (m *Map) crdsOf(only string) (names, groups []string) {
	if only == "" {
		return nil, nil
	}
	groups = []string{}
	for _, name := range strings.Split(only, ",") {
		if _, category := m.expand(name); category {
			return nil, nil
		}
		if _, err := m.resourceFor(name); err == nil {
			continue
		}
		resource, rest, ok := strings.Cut(name, ".")
		if !ok {
			return nil, nil
		}
		candidates := []string{rest}
		if _, group, ok := strings.Cut(rest, "."); ok {
			candidates = append(candidates, group)
		}
		for _, group := range candidates {
			groups = append(groups, group)
			if strings.Contains(group, ".") {
				names = append(names, resource+"."+group)
			}
		}
	}
	return names, groups
}

// crdGroupsOfKinds are the groups of the kinds no built-in resource
// serves, which only their groups' CRDs may serve; empty, not nil, when
// built-in resources serve them all.
func (m *Map) crdGroupsOfKinds(kinds []schema.GroupVersionKind) []string {
	groups := []string{}
	for _, k := range kinds {
		if _, err := m.mapper.RESTMapping(k.GroupKind(), k.Version); err == nil || slices.Contains(groups, k.Group) {
			continue
		}
		groups = append(groups, k.Group)
	}
	return groups
}

// expand is name as one or more resource names: a category's resources
// (`all`), in kubectl's order, or name itself.
func (m *Map) expand(name string) (names []string, category bool) {
	grs, ok := m.categories.Expand(strings.ToLower(name))
	if !ok {
		return []string{name}, false
	}
	for _, gr := range grs {
		names = append(names, gr.String())
	}
	return names, true
}

// NotEstablished names the CRD in etcd that would serve gvk but is not
// established: the apiextensions server's controllers have not accepted its
// names, so neither the server nor regctl serves it. Empty if there is none.
func (m *Map) NotEstablished(gvk schema.GroupVersionKind) string {
	return m.notEstablished[gvk]
}

// Serves tells whether the map serves the group version gv.
func (m *Map) Serves(gv schema.GroupVersion) bool {
	for _, v := range m.versions {
		if v.GV == gv {
			return true
		}
	}
	return false
}

// servesName tells whether name resolves to a resource of the map.
func (m *Map) servesName(name string) bool {
	_, err := m.resourceFor(name)
	return err == nil
}

// resourceFor is kubectl's resource.Builder.mappingFor: a fully specified
// resource.version.group first, then resource.group, then a kind.
func (m *Map) resourceFor(arg string) (schema.GroupVersionResource, error) {
	full, gr := schema.ParseResourceArg(arg)
	if full != nil {
		if gvr, err := m.mapper.ResourceFor(*full); err == nil {
			return gvr, nil
		}
	}
	gvr, err := m.mapper.ResourceFor(gr.WithVersion(""))
	if err == nil {
		return gvr, nil
	}
	fullKind, gk := schema.ParseKindArg(arg)
	if fullKind != nil {
		if m, kerr := m.mapper.RESTMapping(fullKind.GroupKind(), fullKind.Version); kerr == nil {
			return m.Resource, nil
		}
	}
	if m, kerr := m.mapper.RESTMapping(gk); kerr == nil {
		return m.Resource, nil
	}
	return schema.GroupVersionResource{}, err
}

// handleOf is the handle of the resource the mapper named.
func (m *Map) handleOf(gvr schema.GroupVersionResource) (*handle.Handle, error) {
	for _, h := range m.Handles {
		if h.Route.Subresource == "" && h.Route.Resource == gvr.Resource && h.Route.Group == gvr.Group && h.Route.Version == gvr.Version {
			return m.serving(h)
		}
	}
	return nil, fmt.Errorf("%s is mapped but not a path of the storage map", gvr)
}

// closeNames suggests resources whose names (plural, singular or short)
// are a small edit away from, or start with, what the user typed: cobra's
// suggestions, as kubectl suggests a command. One typo per three letters
// reads as a slip; more is another word.
func (m *Map) closeNames(want string) []string {
	names := &cobra.Command{SuggestionsMinimumDistance: max(1, len(want)/3)}
	resourceOf := map[string]string{}
	for _, v := range m.versions {
		for _, r := range v.Names {
			if strings.Contains(r.Name, "/") {
				continue
			}
			for _, c := range append([]string{r.Name, r.SingularName}, r.ShortNames...) {
				if _, ok := resourceOf[c]; c != "" && !ok {
					resourceOf[c] = r.Name
					names.AddCommand(&cobra.Command{Use: c, Run: func(*cobra.Command, []string) {}})
				}
			}
		}
	}
	var out []string
	for _, c := range names.SuggestionsFor(want) {
		out = append(out, resourceOf[c])
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// serving is h ready to read and write its objects. A custom resource's
// handle is built for serving on the first use of its CRD, for every path
// of the CRD at once, as the CRD handler builds a CRD's storage on the
// first request for it, and kept while the map lives.
func (m *Map) serving(h *handle.Handle) (*handle.Handle, error) {
	if h.Serve == nil {
		return h, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.served[h.Path]; ok {
		return s, nil
	}
	crd := m.crds[h.Path]
	versions, err := m.crs.Build(crd)
	if err != nil {
		return nil, err
	}
	if m.served == nil {
		m.served = map[string]*handle.Handle{}
	}
	for path, c := range m.crds {
		if c != crd {
			continue
		}
		if m.served[path], err = extensions.ServedHandle(m.Handles[path], versions); err != nil {
			return nil, err
		}
	}
	return m.served[h.Path], nil
}

// BuiltCRDs names the CRDs whose custom resources' serving storage the map
// built, once per build, in order: what a command paid for beyond the
// routes. Tests hold commands to building only what they touch.
func (m *Map) BuiltCRDs() []string {
	if m.crs == nil {
		return nil
	}
	return m.crs.Built()
}
