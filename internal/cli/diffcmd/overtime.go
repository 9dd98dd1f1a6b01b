package diffcmd

import (
	"context"
	"errors"

	kubectldiff "k8s.io/kubectl/pkg/cmd/diff"
	"k8s.io/utils/exec"

	"github.com/regctl/regctl/internal/changes"
	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/cli/pointintime"
	"github.com/regctl/regctl/internal/target"
)

// overTime compares the two points in time --from and --to name.
func (o *Options) overTime(ctx context.Context) error {
	sides := pointintime.New(o.SessionConfig(), o.Args, o.targetScope())
	defer sides.Close()
	req, err := sides.Pair(ctx, o.From, o.To)
	if err != nil {
		return cli.Trouble(err)
	}
	req.LabelSelector, req.ChunkSize = o.Selector, 500
	var patch *changes.Patch
	if o.Patch {
		if patch, err = changes.NewPatch(&kubectldiff.DiffProgram{Exec: exec.New(), IOStreams: o.IO}); err != nil {
			return cli.Trouble(err)
		}
		patch.ShowSecrets = o.Diff.ShowSecrets
	}
	err = changes.Print(ctx, o.IO.Out, req, o.Output, patch)
	return cli.DiffStatus(errors.Is(err, changes.ErrDiffer), ignore(err, changes.ErrDiffer))
}

// targetScope is the namespace a diff over time compares: the one -n
// names, or all.
func (o *Options) targetScope() target.Scope {
	if o.NamespaceSet {
		return target.Scope{Namespace: o.Namespace, NamespaceSet: true}
	}
	return target.Scope{AllNamespaces: true}
}

func ignore(err, target error) error {
	if errors.Is(err, target) {
		return nil
	}
	return err
}
