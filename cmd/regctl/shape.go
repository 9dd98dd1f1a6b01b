package main

import (
	"context"

	"github.com/spf13/cobra"
)

// options is the shape of every command's options, as kubectl's: Complete
// takes what the command line gives beyond the flags bound to it (its
// arguments, formats, which flags were given), Validate checks all of it
// before any etcd is touched, and Run makes the command's one call into a
// library.
type options interface {
	Complete(cmd *cobra.Command, args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// withOptions makes cmd complete, validate and run o. runF, when set, is
// called instead of Run, with o completed and valid: tests read a
// command's options so, without an etcd.
func withOptions[O options](cmd *cobra.Command, o O, runF func(context.Context, O) error) *cobra.Command {
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		if err := o.Complete(cmd, args); err != nil {
			return err
		}
		return o.Validate()
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if runF != nil {
			return runF(cmd.Context(), o)
		}
		return o.Run(cmd.Context())
	}
	return cmd
}
