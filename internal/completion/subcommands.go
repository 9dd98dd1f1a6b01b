package completion

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// RequireSubcommands makes each command that only groups subcommands,
// cobra's `completion` among them, refuse an argument that names none of
// them. Cobra answers such a command with its help and exit code 0, so that
// a typo (`regctl completion tcsh`) would pass for success in a script. The
// command alone still prints its help. It is applied to the whole tree once
// it is built.
func RequireSubcommands(root *cobra.Command) {
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
