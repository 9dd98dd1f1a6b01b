package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/restmapper"

	"github.com/spf13/pflag"

	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/stores"
)

// errNoEtcd is what a command that reads a live etcd says when none is given:
// it must not dial a default address and hang. Each way to name the data
// is one item of the list.
var errNoEtcd = errors.New("no etcd given: name the data to work on with " + strings.Join([]string{
	"`--etcd-servers` (and the TLS flags) or etcdctl's ETCDCTL_ENDPOINTS (and ETCDCTL_CACERT, ETCDCTL_CERT, ETCDCTL_KEY) for an etcd",
	"`--data-dir DIR` for a sandbox, an etcd inside regctl on DIR",
	"`--snapshot FILE` for an etcd snapshot, read-only",
}, ", or ") + "; `regctl routes` works without one")

// writable refuses a write to a snapshot, before anything is read.
func (g *globalOptions) writable() error {
	if g.Snapshot != "" {
		return fmt.Errorf("%s is an etcd snapshot, which regctl only reads: write to a live etcd (`--etcd-servers`)", g.Snapshot)
	}
	return nil
}

// buildLive builds the map against the user's etcd, refusing to run on the
// ephemeral one.
func (g *globalOptions) buildLive(ctx context.Context) (*storagemap.Session, error) {
	return g.buildLiveFor(ctx, "")
}

// buildLiveFor is buildLive for a command on the resources named in only
// (as `get` takes them): the map installs only their API versions.
func (g *globalOptions) buildLiveFor(ctx context.Context, only string) (*storagemap.Session, error) {
	if !g.etcdGiven() {
		return nil, errNoEtcd
	}
	cfg := g.sessionConfig()
	cfg.Only = only
	return storagemap.Open(ctx, cfg)
}

// etcdGiven tells whether the user named data to work on: an etcd, a
// sandbox or a snapshot.
func (g *globalOptions) etcdGiven() bool {
	return len(g.Server.Server.Etcd.StorageConfig.Transport.ServerList) > 0 || g.DataDir != "" || g.Snapshot != ""
}

// openLive builds the map on the user's etcd and resolves ref, of one
// type, in it. When verb is set, the path must serve it. The caller closes
// the map.
func (g *globalOptions) openLive(ctx context.Context, ref objectRef, scope scopeOptions, verb string) (*storagemap.Session, stores.Target, error) {
	w, targets, err := g.openLiveTypes(ctx, []objectRef{ref}, scope, verb, resolveEach)
	if err != nil {
		return nil, stores.Target{}, err
	}
	return w, targets[0].Target, nil
}

// openLiveTypes is openLive for the one or more types of refs, resolved by
// resolver.
func (g *globalOptions) openLiveTypes(ctx context.Context, refs []objectRef, scope scopeOptions, verb string, resolver func(*storagemap.Map, []objectRef, scopeOptions) ([]namedTarget, error)) (*storagemap.Session, []namedTarget, error) {
	if err := scope.check(); err != nil {
		return nil, nil, err
	}
	only := make([]string, len(refs))
	for i, r := range refs {
		only[i] = r.Resource
	}
	w, err := g.buildLiveFor(ctx, strings.Join(only, ","))
	if err != nil {
		return nil, nil, err
	}
	targets, err := resolver(w.Map, refs, scope)
	for _, t := range targets {
		if err == nil && verb != "" && !slices.Contains(t.Resource.Verbs, verb) {
			err = fmt.Errorf("%s does not serve %s: only %s", t.Path, verb, strings.Join(t.Resource.Verbs, ", "))
		}
	}
	if err != nil {
		w.Close()
		return nil, nil, err
	}
	return w, targets, nil
}

// namedTarget is a resolved type and the objects named of it (none for a
// list).
type namedTarget struct {
	stores.Target
	Names []string
}

// resolveEach resolves each ref as one type. `-n` with a cluster-scoped
// type is refused when it is the one type named, and passed over among
// several, as kubectl does.
func resolveEach(m *storagemap.Map, refs []objectRef, scope scopeOptions) ([]namedTarget, error) {
	if err := scope.check(); err != nil {
		return nil, err
	}
	out := make([]namedTarget, 0, len(refs))
	for _, ref := range refs {
		base, err := m.Resolve(ref.Resource)
		if err != nil {
			return nil, err
		}
		t, err := scopeTarget(m, base, ref, scope, len(refs) == 1)
		if err != nil {
			return nil, err
		}
		out = append(out, namedTarget{Target: t, Names: ref.Names})
	}
	return out, nil
}

// buildLive checks `-n` before building the map for create and replace.
// They take it for the objects of a manifest that name no namespace, and
// resolve no path through resolve, where the other commands have it
// checked. As a method of writeOptions it is the buildLive their manifest
// writing calls; it builds the map with what the field managers of custom
// resources need, which reads do without.
func (o *writeOptions) buildLive(ctx context.Context) (*storagemap.Session, error) {
	if err := o.scopeOptions.check(); err != nil {
		return nil, err
	}
	if !o.etcdGiven() {
		return nil, errNoEtcd
	}
	return storagemap.Open(ctx, o.writeConfig())
}

// writeConfig is the map's config for a command that writes.
func (o *writeOptions) writeConfig() storagemap.Config {
	cfg := o.sessionConfig()
	cfg.FieldManagement = true
	return cfg
}

// scopeOptions are the namespace flags shared by the commands that take them.
type scopeOptions struct {
	Namespace     string
	AllNamespaces bool
	// namespaceSet tells an explicit -n from the default.
	namespaceSet bool
	// allFlag is set when the command has `-A`, to offer it.
	allFlag bool
}

// check refuses a `-n` that names no namespace, with the apiserver's own
// rule for namespace names: an empty one would silently mean all
// namespaces, and a name no namespace can have (a/b, Shop) can only be a
// mistake. `-A` does without `-n`.
func (s scopeOptions) check() error {
	if s.AllNamespaces {
		return nil
	}
	if s.Namespace == "" {
		if s.allFlag {
			return errors.New("`-n` is empty: name a namespace, or use `-A` for all namespaces")
		}
		return errors.New("`-n` is empty: name a namespace")
	}
	if msgs := apivalidation.ValidateNamespaceName(s.Namespace, false); len(msgs) > 0 {
		return fmt.Errorf("invalid namespace %q in `-n`: %s", s.Namespace, strings.Join(msgs, "; "))
	}
	return nil
}

// objectRef is what the user named of one type (or, in `TYPE[,TYPE...]
// [NAME...]`, of a list of types or a category): a resource, maybe a
// subresource, and object names.
type objectRef struct {
	Resource    string
	Subresource string
	Names       []string
	// oneType is set for TYPE/NAME, which kubectl maps as one type, never
	// a list or a category.
	oneType bool
}

// parseObjectRefs reads the arguments as kubectl's resource builder reads
// them (ResourceTypeOrNameArgs): `TYPE[,TYPE...]`, `TYPE[,TYPE...] NAME...`,
// or `TYPE/NAME...` (pods/web services/web), never `TYPE NAME` and
// `TYPE/NAME` mixed. Consecutive TYPE/NAME of one type are one ref, in the
// order given. Subresources are named with --subresource or, when
// allowSubresource, in regctl's pods/status NAME... form.
func parseObjectRefs(args []string, subresource string, allowSubresource bool) ([]objectRef, error) {
	if len(args) == 0 {
		return nil, errors.New("name a resource, e.g. `pods` or `pods/foo`")
	}
	typ, rest, slashed := strings.Cut(args[0], "/")
	if slashed && allowSubresource && subresource == "" && len(args) > 1 && !slices.ContainsFunc(args[1:], hasSlash) {
		// pods/status foo: the part after the slash is a subresource.
		if rest == "" {
			return nil, fmt.Errorf("%q: name a subresource after the slash, e.g. `%s/status NAME`", args[0], typ)
		}
		return []objectRef{{Resource: typ, Subresource: rest, Names: args[1:]}}, nil
	}
	if err := kubectlArgsError(args); err != nil {
		return nil, err
	}
	if !slashed {
		return []objectRef{{Resource: args[0], Subresource: subresource, Names: args[1:]}}, nil
	}
	// kubectl's builder has accepted every argument as one TYPE/NAME.
	var refs []objectRef
	for _, arg := range args {
		typ, name, _ := strings.Cut(arg, "/")
		if n := len(refs); n > 0 && refs[n-1].Resource == typ {
			refs[n-1].Names = append(refs[n-1].Names, name)
			continue
		}
		refs = append(refs, objectRef{Resource: typ, Subresource: subresource, Names: []string{name}, oneType: true})
	}
	return refs, nil
}

// parseObjectRef is parseObjectRefs for commands on one type: several
// TYPE/NAME must name the same type.
func parseObjectRef(args []string, subresource string, allowSubresource bool) (objectRef, error) {
	refs, err := parseObjectRefs(args, subresource, allowSubresource)
	if err != nil {
		return objectRef{}, err
	}
	ref := refs[0]
	for _, r := range refs[1:] {
		if r.Resource != ref.Resource {
			return objectRef{}, fmt.Errorf("%s and %s are two types: this command works on one at a time", ref.Resource, r.Resource)
		}
		ref.Names = append(ref.Names, r.Names...)
	}
	return ref, nil
}

func hasSlash(s string) bool { return strings.Contains(s, "/") }

// errArgsRead stops kubectl's resource builder once it has read the
// arguments, where it would map their types: regctl maps them on its map.
var errArgsRead = errors.New("arguments read")

// kubectlArgsError is what kubectl's resource builder says of args, passed
// as `kubectl get` passes them: nil if it takes them. The builder is given
// no server: it stops at errArgsRead when it first maps a type, which it
// does only once the arguments are read.
func kubectlArgsError(args []string) error {
	stop := func() (meta.RESTMapper, error) { return nil, errArgsRead }
	noCategories := func() (restmapper.CategoryExpander, error) { return restmapper.SimpleCategoryExpander{}, nil }
	noClient := func(schema.GroupVersion) (resource.RESTClient, error) { return nil, errArgsRead }
	err := resource.NewFakeBuilder(noClient, stop, noCategories).Unstructured().
		ResourceTypeOrNameArgs(true, args...).RequireObject(false).Do().Err()
	if errors.Is(err, errArgsRead) {
		return nil
	}
	return err
}

// resolve turns a reference to one type into a target in the map,
// checking scope.
func resolve(m *storagemap.Map, ref objectRef, scope scopeOptions) (stores.Target, error) {
	targets, err := resolveEach(m, []objectRef{ref}, scope)
	if err != nil {
		return stores.Target{}, err
	}
	return targets[0].Target, nil
}

// resolveTypes resolves refs as `get` takes them: one ref may name several
// types (pods,services) or a category such as all, in the order given; as
// kubectl does with several types, `-n` is passed over for cluster-scoped
// ones. TYPE/NAME refs are one type each.
func resolveTypes(m *storagemap.Map, refs []objectRef, scope scopeOptions) ([]namedTarget, error) {
	ref := refs[0]
	if len(refs) > 1 || ref.oneType {
		return resolveEach(m, refs, scope)
	}
	if !strings.Contains(ref.Resource, ",") {
		if h, err := m.Resolve(ref.Resource); err == nil {
			t, err := scopeTarget(m, h, ref, scope, true)
			return []namedTarget{{Target: t, Names: ref.Names}}, err
		}
	}
	handles, err := m.ResolveList(ref.Resource)
	if err != nil {
		return nil, err
	}
	if len(handles) > 1 && ref.Subresource != "" {
		return nil, fmt.Errorf("a subresource is read of one type at a time, not %s", ref.Resource)
	}
	targets := make([]namedTarget, 0, len(handles))
	for _, h := range handles {
		t, err := scopeTarget(m, h, ref, scope, len(handles) == 1)
		if err != nil {
			return nil, err
		}
		targets = append(targets, namedTarget{Target: t, Names: ref.Names})
	}
	return targets, nil
}

// scopeTarget is the target of the resource of base (or its subresource)
// in the namespace scope says. strict refuses `-n` for a cluster-scoped
// resource, which can only be a slip when it is the one type named.
func scopeTarget(m *storagemap.Map, base *storagemap.Handle, ref objectRef, scope scopeOptions, strict bool) (stores.Target, error) {
	res := base.Resource
	h, err := m.Subresource(base, ref.Subresource)
	if err != nil {
		return stores.Target{}, err
	}
	t := stores.Target{Handle: h}
	if scope.AllNamespaces && len(ref.Names) > 0 {
		return stores.Target{}, errors.New("`--all-namespaces` cannot be used with object names: pick a namespace with `-n`")
	}
	switch {
	case !res.Namespaced && scope.namespaceSet && strict:
		return stores.Target{}, fmt.Errorf("%s is cluster-scoped: drop `-n %s`", res.Name, scope.Namespace)
	case !res.Namespaced, scope.AllNamespaces:
		t.Namespace = metav1.NamespaceAll
	default:
		t.Namespace = scope.Namespace
	}
	return t, nil
}

func addScopeFlags(fs *pflag.FlagSet, s *scopeOptions) {
	addNamespaceFlag(fs, s)
	fs.BoolVarP(&s.AllNamespaces, "all-namespaces", "A", false, "Across all namespaces")
	s.allFlag = true
}

// addNamespaceFlag is `-n` alone, for commands that work in one namespace.
func addNamespaceFlag(fs *pflag.FlagSet, s *scopeOptions) {
	fs.StringVarP(&s.Namespace, "namespace", "n", metav1.NamespaceDefault, "Namespace of namespaced resources")
}
