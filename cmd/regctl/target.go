package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/spf13/pflag"

	"github.com/regctl/regctl/internal/stores"
	"github.com/regctl/regctl/internal/wiring"
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
func (g *globalOptions) buildLive(ctx context.Context) (*wiring.Wiring, error) {
	return g.buildLiveFor(ctx, "")
}

// buildLiveFor is buildLive for a command on the resources named in only
// (as `get` takes them): the map installs only their API versions.
func (g *globalOptions) buildLiveFor(ctx context.Context, only string) (*wiring.Wiring, error) {
	if !g.etcdGiven() {
		return nil, errNoEtcd
	}
	cfg := g.wiringConfig()
	cfg.Only = only
	return wiring.Build(ctx, cfg)
}

// etcdGiven tells whether the user named data to work on: an etcd, a
// sandbox or a snapshot.
func (g *globalOptions) etcdGiven() bool {
	return len(g.Server.Server.Etcd.StorageConfig.Transport.ServerList) > 0 || g.DataDir != "" || g.Snapshot != ""
}

// openLive builds the map on the user's etcd and resolves ref, of one
// type, in it. When verb is set, the path must serve it. The caller closes
// the map.
func (g *globalOptions) openLive(ctx context.Context, ref objectRef, scope scopeOptions, verb string) (*wiring.Wiring, stores.Target, error) {
	w, targets, err := g.openLiveTypes(ctx, ref, scope, verb, resolveOne)
	if err != nil {
		return nil, stores.Target{}, err
	}
	return w, targets[0], nil
}

// openLiveTypes is openLive for one or more types, resolved by resolver.
func (g *globalOptions) openLiveTypes(ctx context.Context, ref objectRef, scope scopeOptions, verb string, resolver func(*wiring.Wiring, objectRef, scopeOptions) ([]stores.Target, error)) (*wiring.Wiring, []stores.Target, error) {
	if err := scope.check(); err != nil {
		return nil, nil, err
	}
	w, err := g.buildLiveFor(ctx, ref.Resource)
	if err != nil {
		return nil, nil, err
	}
	targets, err := resolver(w, ref, scope)
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

func resolveOne(w *wiring.Wiring, ref objectRef, scope scopeOptions) ([]stores.Target, error) {
	t, err := resolve(w, ref, scope)
	return []stores.Target{t}, err
}

// buildLive checks `-n` before building the map for create and replace.
// They take it for the objects of a manifest that name no namespace, and
// resolve no path through resolve, where the other commands have it
// checked. As a method of writeOptions it is the buildLive their manifest
// writing calls; it builds the map with what the field managers of custom
// resources need, which reads do without.
func (o *writeOptions) buildLive(ctx context.Context) (*wiring.Wiring, error) {
	if err := o.scopeOptions.check(); err != nil {
		return nil, err
	}
	if !o.etcdGiven() {
		return nil, errNoEtcd
	}
	return wiring.Build(ctx, o.writeConfig())
}

// writeConfig is the map's config for a command that writes.
func (o *writeOptions) writeConfig() wiring.Config {
	cfg := o.wiringConfig()
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

// objectRef is what the user named: a resource, maybe a subresource, and
// object names, in any of kubectl's forms (pods/foo, pods foo bar,
// pods/status foo).
type objectRef struct {
	Resource    string
	Subresource string
	Names       []string
}

// Subresources are named with --subresource or, when allowSubresource, in
// the pods/status NAME form.
func parseObjectRef(args []string, subresource string, allowSubresource bool) (objectRef, error) {
	if len(args) == 0 {
		return objectRef{}, errors.New("name a resource, e.g. `pods` or `pods/foo`")
	}
	ref := objectRef{Subresource: subresource}
	typ, rest, slashed := strings.Cut(args[0], "/")
	ref.Resource = typ
	switch {
	case !slashed:
		ref.Names = args[1:]
	case len(args) == 1:
		ref.Names = []string{rest}
	case subresource == "" && allowSubresource:
		// pods/status foo: the part after the slash is a subresource.
		ref.Subresource, ref.Names = rest, args[1:]
	default:
		return objectRef{}, fmt.Errorf("%q names one object; pass further names without a resource type, or use `%s NAME...`", args[0], typ)
	}
	if rest == "" && slashed {
		return objectRef{}, fmt.Errorf("%q: missing a name after the slash", args[0])
	}
	return ref, nil
}

// resolve turns a reference to one type into a target in the map,
// checking scope.
func resolve(w *wiring.Wiring, ref objectRef, scope scopeOptions) (stores.Target, error) {
	if err := scope.check(); err != nil {
		return stores.Target{}, err
	}
	base, err := w.Resolve(ref.Resource)
	if err != nil {
		return stores.Target{}, err
	}
	return scopeTarget(w, base, ref, scope, true)
}

// resolveTypes turns a reference to one or more types (pods,services, or a
// category such as all) into targets, in the order given. As kubectl does
// with several types, `-n` is passed over for cluster-scoped ones.
func resolveTypes(w *wiring.Wiring, ref objectRef, scope scopeOptions) ([]stores.Target, error) {
	if !strings.Contains(ref.Resource, ",") {
		if h, err := w.Resolve(ref.Resource); err == nil {
			t, err := scopeTarget(w, h, ref, scope, true)
			return []stores.Target{t}, err
		}
	}
	handles, err := w.ResolveList(ref.Resource)
	if err != nil {
		return nil, err
	}
	if len(handles) > 1 && ref.Subresource != "" {
		return nil, fmt.Errorf("a subresource is read of one type at a time, not %s", ref.Resource)
	}
	targets := make([]stores.Target, 0, len(handles))
	for _, h := range handles {
		t, err := scopeTarget(w, h, ref, scope, len(handles) == 1)
		if err != nil {
			return nil, err
		}
		targets = append(targets, t)
	}
	return targets, nil
}

// scopeTarget is the target of the resource of base (or its subresource)
// in the namespace scope says. strict refuses `-n` for a cluster-scoped
// resource, which can only be a slip when it is the one type named.
func scopeTarget(w *wiring.Wiring, base *wiring.Handle, ref objectRef, scope scopeOptions, strict bool) (stores.Target, error) {
	res := base.Resource
	h, err := w.Subresource(base, ref.Subresource)
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

// resolveKind finds the resource a manifest object belongs to by its
// apiVersion and kind, as kubectl maps them, among the map's resources.
func resolveKind(w *wiring.Wiring, gvk schema.GroupVersionKind) (*wiring.Handle, error) {
	h, err := w.ResolveKind(gvk)
	switch {
	case err == nil:
		return h, nil
	case w.NotEstablished(gvk) != "":
		return nil, fmt.Errorf("%s %s is not served: customresourcedefinition %s is not established, and a server serves only established CRDs (its apiextensions controllers establish them)", gvk.GroupVersion(), gvk.Kind, w.NotEstablished(gvk))
	case !w.Serves(gvk.GroupVersion()):
		return nil, fmt.Errorf("apiVersion %q is not served (see `regctl routes -o wide`)", gvk.GroupVersion())
	}
	return nil, fmt.Errorf("unknown kind %q in %s (see `regctl routes -o wide`)", gvk.Kind, gvk.GroupVersion())
}
