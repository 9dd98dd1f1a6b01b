// Command gendocs writes regctl's reference, markdown pages and man pages,
// from its command tree (internal/cli/rootcmd), into DIR/reference and
// DIR/man:
//
//	go run ./cmd/gendocs docs
//
// It is a program of its own, as Kubernetes keeps cmd/genkubedocs, so that
// the regctl binary carries no documentation generator.
package main

import (
	"fmt"
	"os"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/cli/rootcmd"
	"github.com/regctl/regctl/internal/docgen"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run ./cmd/gendocs DIR (docs, at the repository's root)")
		os.Exit(2)
	}
	if err := generate(os.Args[1]); err != nil {
		fmt.Fprintf(os.Stderr, "error: %s\n", err)
		os.Exit(1)
	}
}

// generate writes the pages of regctl's command tree, as the regctl binary
// builds it, under dir.
func generate(dir string) error {
	rootcmd.DropGlobalFlags()
	root, _ := rootcmd.New(cli.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	if err := docgen.Generate(root, dir); err != nil {
		return fmt.Errorf("writing regctl's reference into %s: %w", dir, err)
	}
	return nil
}
