// Package completion completes regctl's arguments and flags in a shell: the
// resources of the storage map and the names of their objects, namespaces,
// output formats, and the values of the HTTP routes' filters. Commands set
// these functions on their cobra commands; cobra calls them through its
// hidden __complete command, with the flags typed so far already parsed.
// Errors go to stderr, which the shell scripts discard, and complete
// nothing.
//
// It is the commands' glue to the map: each completion builds the map from
// the flags typed so far, on an ephemeral etcd when no etcd is named, as
// `regctl routes` builds it.
package completion

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/logs"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/stores"
)

// Flags are what a completion reads of the command line typed so far.
type Flags struct {
	// Config builds the map; its Timeout also bounds listing objects.
	Config storagemap.Config
	// Verbosity is -v, for the logs of building the map.
	Verbosity int
	// EtcdGiven says the user named an etcd, a sandbox or a snapshot.
	// Object names are only offered from it: an ephemeral etcd holds none.
	EtcdGiven bool
}

// FlagsFunc reads the flags when a completion runs: cobra parses them into
// the commands' options only then.
type FlagsFunc func() Flags

// Resources completes a resource of the storage map as the first argument:
// its plural name or a short name.
func Resources(flags FlagsFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		w, err := open(cmd, flags())
		if err != nil {
			return fail(cmd, err)
		}
		defer w.Close()
		return resourceCompletions(w.Map.Table, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// ResourceObjects completes `RESOURCE [NAME...]` and `RESOURCE/NAME...`:
// the first argument as Resources does, then the names of the objects of
// that resource (after a RESOURCE/NAME, further RESOURCE/NAME arguments, as
// kubectl takes them), listed through its store from the etcd the user
// named, in the namespace of the command's --namespace flag if it has one
// (all namespaces otherwise). Without such an etcd there is none to read,
// so no names are offered.
func ResourceObjects(flags FlagsFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		resource, prefix := "", toComplete
		// After RESOURCE/NAME, every argument is one (kubectl refuses a
		// mix), completed as the first.
		slashed := len(args) > 0 && strings.Contains(args[0], "/")
		switch {
		case (len(args) == 0 || slashed) && strings.Contains(toComplete, "/"):
			resource, prefix, _ = strings.Cut(toComplete, "/")
		case len(args) == 0 || slashed:
			// As for a first argument, which Resources takes args to be.
			return Resources(flags)(cmd, nil, toComplete)
		default:
			resource = args[0]
		}
		names, err := objectNamesOf(cmd, flags(), resource)
		if err != nil {
			return fail(cmd, err)
		}
		var out []cobra.Completion
		for _, name := range names {
			switch {
			case !strings.HasPrefix(name, prefix):
			case len(args) == 0 || slashed:
				if !slices.Contains(args, resource+"/"+name) {
					out = append(out, resource+"/"+name)
				}
			case !slices.Contains(args[1:], name):
				out = append(out, name)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// HTTPRoutes completes a comma-separated flag of `routes --http` with the
// values of the routes the map's installer registers (their resources,
// their actions): the last value after the commas typed so far.
func HTTPRoutes(flags FlagsFunc, values func(routetable.HTTPRouteTable) []string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		w, err := open(cmd, flags())
		if err != nil {
			return fail(cmd, err)
		}
		defer w.Close()
		t, err := w.Map.HTTPRoutes()
		if err != nil {
			return fail(cmd, err)
		}
		return commaCompletions(values(t), toComplete), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}

// Routes completes the paths of the storage map, as `regctl routes`
// names them.
func Routes(flags FlagsFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		w, err := open(cmd, flags())
		if err != nil {
			return fail(cmd, err)
		}
		defer w.Close()
		var out []cobra.Completion
		for _, r := range w.Map.Table.Routes {
			if strings.HasPrefix(r.Path, toComplete) {
				out = append(out, r.Path)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// Namespaces completes a --namespace flag with the namespaces in the etcd
// the user named; without one, with nothing.
func Namespaces(flags FlagsFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		names, err := objectNamesOf(cmd, flags(), "namespaces")
		if err != nil {
			return fail(cmd, err)
		}
		var out []cobra.Completion
		for _, name := range names {
			if strings.HasPrefix(name, toComplete) {
				out = append(out, name)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// Formats completes an --output flag with the formats a command accepts.
func Formats(formats ...render.Format) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		for _, f := range formats {
			if strings.HasPrefix(string(f), toComplete) {
				out = append(out, string(f))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// open builds the storage map for a completion. Completion skips the
// commands' PersistentPreRunE, so logging is set up here: a library log
// line would otherwise reach the user's terminal.
func open(cmd *cobra.Command, f Flags) (*storagemap.Session, error) {
	logs.Setup(f.Verbosity, cmd.ErrOrStderr())
	return storagemap.Open(contextOf(cmd), f.Config)
}

// contextOf is the command's context; cobra leaves it nil when a command is
// executed without ExecuteContext.
func contextOf(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

func fail(cmd *cobra.Command, err error) ([]cobra.Completion, cobra.ShellCompDirective) {
	fmt.Fprintf(cmd.ErrOrStderr(), "error: completing: %s\n", render.OneLine(err))
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// resourceCompletions are the resources of the table (not subresources),
// described by their kind, and their short names, described by the
// resource, that start with prefix, sorted.
func resourceCompletions(t routetable.RouteTable, prefix string) []cobra.Completion {
	var out []cobra.Completion
	seen := map[string]bool{}
	offer := func(name, desc string) {
		if strings.HasPrefix(name, prefix) && !seen[name] {
			seen[name] = true
			out = append(out, cobra.CompletionWithDesc(name, desc))
		}
	}
	// Routes come in the server's group order, so a name two groups use
	// (events) is offered bare for the group kubectl resolves it to, and
	// qualified for the other. As kubectl completes, only what can be got.
	for _, r := range t.Routes {
		if r.Subresource != "" || !slices.Contains(r.Verbs, "get") || r.Path != preferredName(r) {
			continue
		}
		name := r.Resource
		if seen[name] {
			name = r.Path
		}
		offer(name, r.Kind)
		for _, short := range r.ShortNames {
			offer(short, name)
		}
	}
	slices.Sort(out)
	return out
}

// preferredName is how a route of the group's preferred version is named:
// resource.group, without a version.
func preferredName(r routetable.Route) string {
	if r.Group == "" {
		return r.Resource
	}
	return r.Resource + "." + r.Group
}

// commaCompletions completes the last of the comma-separated values typed
// so far with values, each offered once: the whole flag value is the
// completion, as the shell replaces it.
func commaCompletions(values []string, toComplete string) []cobra.Completion {
	typed, last := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		typed, last = toComplete[:i+1], toComplete[i+1:]
	}
	var out []cobra.Completion
	for _, v := range values {
		if strings.HasPrefix(v, last) && !slices.Contains(strings.Split(typed, ","), v) {
			out = append(out, typed+v)
		}
	}
	return out
}

// objectNamesOf lists the names of resource's objects from the etcd the
// user named, in the namespace of the command's --namespace flag; without
// an etcd there is nothing to read, and no names.
func objectNamesOf(cmd *cobra.Command, f Flags, resource string) ([]string, error) {
	if !f.EtcdGiven {
		return nil, nil
	}
	w, err := open(cmd, f)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	namespace := ""
	if flag := cmd.Flags().Lookup("namespace"); flag != nil {
		namespace = flag.Value.String()
	}
	return objectNames(contextOf(cmd), w.Map, resource, namespace, f.Config.Timeout)
}

// objectNames lists the names of the objects of resource (named as get
// names it) through its store, in namespace when the resource is
// namespaced and namespace is set, sorted and without repeats (a name may
// be used in several namespaces), within timeout if it is not 0. A name
// the map does not resolve to a stored resource has no objects to offer.
func objectNames(ctx context.Context, m *storagemap.Map, resource, namespace string, timeout time.Duration) ([]string, error) {
	h, err := m.Resolve(resource)
	if err != nil || !h.Stored() {
		return nil, nil
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	t := handle.Target{Handle: h}
	if h.Resource.Namespaced {
		t.Namespace = namespace
	}
	var names []string
	err = stores.List(ctx, t, stores.ListOptions{ChunkSize: 500}, func(p stores.Page) error {
		for _, item := range p.Items {
			m, err := meta.Accessor(item)
			if err != nil {
				return err
			}
			names = append(names, m.GetName())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}
