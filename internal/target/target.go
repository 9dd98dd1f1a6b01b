// Package target turns what a user names on the command line, as kubectl
// reads it (TYPE[,TYPE...] [NAME...], TYPE/NAME..., with -n and -A), into the
// handles of the storage map and the namespaces to read or write them in.
// It resolves through the map's resolver and links nothing of the map's
// assembly.
package target

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/regctl/regctl/internal/handle"
)

// Resolver is what resolving needs of the storage map: its names, as
// kubectl maps them (resources, short names, categories), and its
// subresources.
type Resolver interface {
	Resolve(name string) (*handle.Handle, error)
	ResolveList(names string) ([]*handle.Handle, error)
	Subresource(h *handle.Handle, sub string) (*handle.Handle, error)
}

// Scope are the namespace flags shared by the commands that take them.
type Scope struct {
	Namespace     string
	AllNamespaces bool
	// NamespaceSet tells an explicit -n from the default.
	NamespaceSet bool
	// AllFlag is set when the command has `-A`, to offer it.
	AllFlag bool
}

// check refuses a `-n` that names no namespace, with the apiserver's own
// rule for namespace names: an empty one would silently mean all
// namespaces, and a name no namespace can have (a/b, Shop) can only be a
// mistake. `-A` does without `-n`.
func (s Scope) Check() error {
	if s.AllNamespaces {
		return nil
	}
	if s.Namespace == "" {
		if s.AllFlag {
			return errors.New("`-n` is empty: name a namespace, or use `-A` for all namespaces")
		}
		return errors.New("`-n` is empty: name a namespace")
	}
	if msgs := apivalidation.ValidateNamespaceName(s.Namespace, false); len(msgs) > 0 {
		return fmt.Errorf("invalid namespace %q in `-n`: %s", s.Namespace, strings.Join(msgs, "; "))
	}
	return nil
}

// Ref is what the user named of one type (or, in `TYPE[,TYPE...]
// [NAME...]`, of a list of types or a category): a resource, maybe a
// subresource, and object names.
type Ref struct {
	Resource    string
	Subresource string
	Names       []string
	// OneType is set for TYPE/NAME, which kubectl maps as one type, never
	// a list or a category.
	OneType bool
}

// ParseRefs reads the arguments as kubectl's resource builder reads
// them (ResourceTypeOrNameArgs): `TYPE[,TYPE...]`, `TYPE[,TYPE...] NAME...`,
// or `TYPE/NAME...` (pods/web services/web), never `TYPE NAME` and
// `TYPE/NAME` mixed. Consecutive TYPE/NAME of one type are one ref, in the
// order given. Subresources are named with --subresource or, when
// allowSubresource, in regctl's pods/status NAME... form.
func ParseRefs(args []string, subresource string, allowSubresource bool) ([]Ref, error) {
	if len(args) == 0 {
		return nil, errors.New("name a resource, e.g. `pods` or `pods/foo`")
	}
	typ, rest, slashed := strings.Cut(args[0], "/")
	if slashed && allowSubresource && subresource == "" && len(args) > 1 && !slices.ContainsFunc(args[1:], hasSlash) {
		// pods/status foo: the part after the slash is a subresource.
		if rest == "" {
			return nil, fmt.Errorf("%q: name a subresource after the slash, e.g. `%s/status NAME`", args[0], typ)
		}
		return []Ref{{Resource: typ, Subresource: rest, Names: args[1:]}}, nil
	}
	if err := kubectlArgsError(args); err != nil {
		return nil, err
	}
	if !slashed {
		return []Ref{{Resource: args[0], Subresource: subresource, Names: args[1:]}}, nil
	}
	// kubectl's builder has accepted every argument as one TYPE/NAME.
	var refs []Ref
	for _, arg := range args {
		typ, name, _ := strings.Cut(arg, "/")
		if n := len(refs); n > 0 && refs[n-1].Resource == typ {
			refs[n-1].Names = append(refs[n-1].Names, name)
			continue
		}
		refs = append(refs, Ref{Resource: typ, Subresource: subresource, Names: []string{name}, OneType: true})
	}
	return refs, nil
}

// ParseRef is ParseRefs for commands on one type: several
// TYPE/NAME must name the same type.
func ParseRef(args []string, subresource string, allowSubresource bool) (Ref, error) {
	refs, err := ParseRefs(args, subresource, allowSubresource)
	if err != nil {
		return Ref{}, err
	}
	ref := refs[0]
	for _, r := range refs[1:] {
		if r.Resource != ref.Resource {
			return Ref{}, fmt.Errorf("%s and %s are two types: this command works on one at a time", ref.Resource, r.Resource)
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
// no server (argsOnly): it stops at errArgsRead when it first maps a type,
// which it does only once the arguments are read.
func kubectlArgsError(args []string) error {
	err := resource.NewBuilder(argsOnly{}).Unstructured().
		ResourceTypeOrNameArgs(true, args...).RequireObject(false).Do().Err()
	if errors.Is(err, errArgsRead) {
		return nil
	}
	return err
}

// argsOnly is the server of a builder that only reads arguments: every
// request to it ends in errArgsRead. Its discovery, which the builder asks
// for categories (all), lists nothing, so names are left for regctl's own
// resolver to expand, as with any other name.
type argsOnly struct{}

func (argsOnly) ToRESTConfig() (*rest.Config, error)    { return nil, errArgsRead }
func (argsOnly) ToRESTMapper() (meta.RESTMapper, error) { return nil, errArgsRead }

func (argsOnly) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	refuse := roundTripper(func(*http.Request) (*http.Response, error) { return nil, errArgsRead })
	d, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: "https://arguments.invalid", Transport: refuse})
	if err != nil {
		return nil, err
	}
	return uncached{d}, nil
}

// uncached is a discovery client as the builder takes one, with nothing
// to cache.
type uncached struct{ *discovery.DiscoveryClient }

func (uncached) Fresh() bool { return true }
func (uncached) Invalidate() {}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Named is a resolved type and the objects named of it (none for a
// list).
type Named struct {
	handle.Target
	Names []string
}

// One turns a reference to one type into a target in the map,
// checking scope.
func One(m Resolver, ref Ref, scope Scope) (handle.Target, error) {
	targets, err := Each(m, []Ref{ref}, scope)
	if err != nil {
		return handle.Target{}, err
	}
	return targets[0].Target, nil
}

// Each resolves each ref as one type. `-n` with a cluster-scoped
// type is refused when it is the one type named, and passed over among
// several, as kubectl does.
func Each(m Resolver, refs []Ref, scope Scope) ([]Named, error) {
	if err := scope.Check(); err != nil {
		return nil, err
	}
	out := make([]Named, 0, len(refs))
	for _, ref := range refs {
		base, err := m.Resolve(ref.Resource)
		if err != nil {
			return nil, err
		}
		t, err := scoped(m, base, ref, scope, len(refs) == 1)
		if err != nil {
			return nil, err
		}
		out = append(out, Named{Target: t, Names: ref.Names})
	}
	return out, nil
}

// Types resolves refs as `get` takes them: one ref may name several
// types (pods,services) or a category such as all, in the order given; as
// kubectl does with several types, `-n` is passed over for cluster-scoped
// ones. TYPE/NAME refs are one type each.
func Types(m Resolver, refs []Ref, scope Scope) ([]Named, error) {
	if err := scope.Check(); err != nil {
		return nil, err
	}
	ref := refs[0]
	if len(refs) > 1 || ref.OneType {
		return Each(m, refs, scope)
	}
	if !strings.Contains(ref.Resource, ",") {
		if h, err := m.Resolve(ref.Resource); err == nil {
			t, err := scoped(m, h, ref, scope, true)
			return []Named{{Target: t, Names: ref.Names}}, err
		}
	}
	handles, err := m.ResolveList(ref.Resource)
	if err != nil {
		return nil, err
	}
	if len(handles) > 1 && ref.Subresource != "" {
		return nil, fmt.Errorf("a subresource is read of one type at a time, not %s", ref.Resource)
	}
	targets := make([]Named, 0, len(handles))
	for _, h := range handles {
		t, err := scoped(m, h, ref, scope, len(handles) == 1)
		if err != nil {
			return nil, err
		}
		targets = append(targets, Named{Target: t, Names: ref.Names})
	}
	return targets, nil
}

// scoped is the target of the resource of base (or its subresource)
// in the namespace scope says. strict refuses `-n` for a cluster-scoped
// resource, which can only be a slip when it is the one type named.
func scoped(m Resolver, base *handle.Handle, ref Ref, scope Scope, strict bool) (handle.Target, error) {
	res := base.Resource
	h, err := m.Subresource(base, ref.Subresource)
	if err != nil {
		return handle.Target{}, err
	}
	t := handle.Target{Handle: h}
	if scope.AllNamespaces && len(ref.Names) > 0 {
		return handle.Target{}, errors.New("`--all-namespaces` cannot be used with object names: pick a namespace with `-n`")
	}
	switch {
	case !res.Namespaced && scope.NamespaceSet && strict:
		return handle.Target{}, fmt.Errorf("%s is cluster-scoped: drop `-n %s`", res.Name, scope.Namespace)
	case !res.Namespaced, scope.AllNamespaces:
		t.Namespace = metav1.NamespaceAll
	default:
		t.Namespace = scope.Namespace
	}
	return t, nil
}
