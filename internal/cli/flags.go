package cli

import (
	"errors"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/regctl/regctl/internal/completion"
	"github.com/regctl/regctl/internal/target"
)

// AddScopeFlags are kubectl's -n and -A.
func AddScopeFlags(fs *pflag.FlagSet, s *target.Scope) {
	AddNamespaceFlag(fs, s)
	fs.BoolVarP(&s.AllNamespaces, "all-namespaces", "A", false, "Across all namespaces")
	s.AllFlag = true
}

// AddNamespaceFlag is `-n` alone, for commands that work in one namespace.
func AddNamespaceFlag(fs *pflag.FlagSet, s *target.Scope) {
	fs.StringVarP(&s.Namespace, "namespace", "n", metav1.NamespaceDefault, "Namespace of namespaced resources")
}

// CompleteNamespaces completes cmd's `-n` with the namespaces stored in the
// etcd the flags typed so far name.
func CompleteNamespaces(cmd *cobra.Command, g *Globals) {
	_ = cmd.RegisterFlagCompletionFunc("namespace", completion.Namespaces(g.CompletionFlags))
}

// ErrNamespaceAndAll refuses `-n` and `-A` given together, to a command
// that takes -A for every namespace.
var ErrNamespaceAndAll = errors.New("`-n` and `-A` both given: name one namespace, or all")

// AddDryRunFlag is kubectl's --dry-run (none, server or client; bare, as
// kubectl still takes it, is client), with usage saying what it does in
// regctl, where there is no client to stop short of the server: every dry
// run runs the server's code and writes nothing.
func AddDryRunFlag(cmd *cobra.Command, usage string) {
	cmdutil.AddDryRunFlag(cmd)
	cmd.Flags().Lookup("dry-run").Usage = `Must be "none", "server" or "client" (the same in regctl). ` + usage
}

// DryRun reads --dry-run as kubectl reads it.
func DryRun(cmd *cobra.Command) (bool, error) {
	s, err := cmdutil.GetDryRunStrategy(cmd)
	return s != cmdutil.DryRunNone, err
}
