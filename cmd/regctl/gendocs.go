package main

import (
	"github.com/spf13/cobra"

	"github.com/regctl/regctl/internal/docgen"
)

// newGendocsCmd writes the reference docs and man pages from the real
// command tree. It lives in the binary, hidden, because the command tree is
// in package main, which a separate generator could not import.
func newGendocsCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "__gendocs DIR",
		Short:  "Write the markdown reference into DIR/reference and man pages into DIR/man",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return docgen.Generate(cmd.Root(), args[0])
		},
	}
}
