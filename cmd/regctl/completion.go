package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/regctl/regctl/internal/logs"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/stores"
)

// Shell completion for regctl's arguments. Commands set these as their
// ValidArgsFunction; cobra calls them through its hidden __complete command,
// with the flags typed so far already parsed into g. Errors go to stderr,
// which the shell scripts discard, and complete nothing.

// completeResources completes a resource of the storage map: its plural
// name or a short name. The map is built from the flags on the command line,
// on an ephemeral etcd when no --etcd-servers is given, as `regctl routes`
// builds it.
func completeResources(g *globalOptions) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		w, err := completionSession(cmd, g)
		if err != nil {
			return completionError(cmd, err)
		}
		defer w.Close()
		return resourceCompletions(w.Map.Table, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeResourceObjects completes `RESOURCE [NAME...]` and
// `RESOURCE/NAME...`: the first argument as completeResources does, then the
// names of the objects of that resource (after a RESOURCE/NAME, further
// RESOURCE/NAME arguments, as kubectl takes them), listed through its store from the etcd given by
// --etcd-servers, in the namespace of the command's --namespace flag if it
// has one (all namespaces otherwise). Without --etcd-servers there is no
// etcd to read, so no names are offered.
func completeResourceObjects(g *globalOptions) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		resource, prefix := "", toComplete
		// After RESOURCE/NAME, every argument is one (kubectl refuses a
		// mix), completed as the first.
		slashed := len(args) > 0 && strings.Contains(args[0], "/")
		switch {
		case (len(args) == 0 || slashed) && strings.Contains(toComplete, "/"):
			resource, prefix, _ = strings.Cut(toComplete, "/")
		case len(args) == 0 || slashed:
			// As for a first argument, which completeResources takes
			// args to be.
			return completeResources(g)(cmd, nil, toComplete)
		default:
			resource = args[0]
		}
		names, err := completionNames(cmd, g, resource)
		if err != nil {
			return completionError(cmd, err)
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

// completeHTTPRoutes completes a comma-separated flag of `routes --http`
// with the values of the routes the map's installer registers (their
// resources, their actions): the last value after the commas typed so far.
func completeHTTPRoutes(g *globalOptions, values func(routetable.HTTPRouteTable) []string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		w, err := completionSession(cmd, g)
		if err != nil {
			return completionError(cmd, err)
		}
		defer w.Close()
		t, err := w.Map.HTTPRoutes()
		if err != nil {
			return completionError(cmd, err)
		}
		typed, last := "", toComplete
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			typed, last = toComplete[:i+1], toComplete[i+1:]
		}
		var out []cobra.Completion
		for _, v := range values(t) {
			if strings.HasPrefix(v, last) && !slices.Contains(strings.Split(typed, ","), v) {
				out = append(out, typed+v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}

// completeNamespaces completes a --namespace flag with the namespaces in the
// etcd given by --etcd-servers; without one, with nothing.
func completeNamespaces(g *globalOptions) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		names, err := completionNames(cmd, g, "namespaces")
		if err != nil {
			return completionError(cmd, err)
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

// completeFormats completes an --output flag with the formats a command
// accepts.
func completeFormats(formats ...render.Format) cobra.CompletionFunc {
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

// completionEtcdGiven tells whether the user named an etcd to read, or a
// sandbox. Object names are only offered from it: an ephemeral etcd holds
// none.
func completionEtcdGiven(g *globalOptions) bool {
	return g.etcdGiven()
}

// completionSession opens a session on the storage map for a completion. Completion skips
// the commands' PersistentPreRunE, so logging is set up here: a library log
// line would otherwise reach the user's terminal.
func completionSession(cmd *cobra.Command, g *globalOptions) (*storagemap.Session, error) {
	logs.Setup(g.Verbosity, cmd.ErrOrStderr())
	return storagemap.Open(completionContext(cmd), g.sessionConfig())
}

// completionContext is the command's context; cobra leaves it nil when a
// command is executed without ExecuteContext.
func completionContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

func completionError(cmd *cobra.Command, err error) ([]cobra.Completion, cobra.ShellCompDirective) {
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

// completionNames lists the names of resource's objects from the etcd given
// by --etcd-servers; without one there is nothing to read, and no names.
func completionNames(cmd *cobra.Command, g *globalOptions, resource string) ([]string, error) {
	if !completionEtcdGiven(g) {
		return nil, nil
	}
	w, err := completionSession(cmd, g)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	return completionObjectNames(cmd, g, w, resource)
}

// completionObjectNames lists the names of the objects of resource (named
// as get names it) through its store, sorted and without repeats (a name
// may be used in several namespaces).
func completionObjectNames(cmd *cobra.Command, g *globalOptions, w *storagemap.Session, resource string) ([]string, error) {
	h, err := w.Map.Resolve(resource)
	if err != nil || !h.Stored() {
		return nil, nil
	}
	ctx := completionContext(cmd)
	if g.RequestTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, g.RequestTimeout)
		defer cancel()
	}
	t := stores.Target{Handle: h}
	if f := cmd.Flags().Lookup("namespace"); f != nil && h.Resource.Namespaced {
		t.Namespace = f.Value.String()
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

// requireSubcommands makes each command that only groups subcommands, cobra's
// `completion` among them, refuse an argument that names none of them.
// Cobra answers such a command with its help and exit code 0, so that a
// typo (`regctl completion tcsh`) would pass for success in a script. The
// command alone still prints its help. It is applied to the whole tree once
// it is built.
func requireSubcommands(root *cobra.Command) {
	// Cobra adds its completion command only when the tree is executed; add
	// it now so that it is covered too.
	root.InitDefaultCompletionCmd()
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		// The root already refuses unknown commands.
		if !c.HasParent() || c.Runnable() || !c.HasAvailableSubCommands() {
			return
		}
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return unknownSubcommand(cmd, args[0])
		}
	}
	walk(root)
}

// unknownSubcommand names the subcommands cmd has, in one line.
func unknownSubcommand(cmd *cobra.Command, arg string) error {
	var names []string
	for _, sub := range cmd.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	what := "command"
	if cmd.Name() == "completion" {
		what = "shell"
	}
	return fmt.Errorf("unknown %s %q for %q: use one of %s", what, arg, cmd.CommandPath(), strings.Join(names, ", "))
}
