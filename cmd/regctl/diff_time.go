package main

import (
	"context"
	"errors"

	kubectldiff "k8s.io/kubectl/pkg/cmd/diff"
	"k8s.io/utils/exec"

	"github.com/regctl/regctl/internal/changes"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/points"
	"github.com/regctl/regctl/internal/target"
)

// overTime compares the two points in time --from and --to name.
func (o *diffOptions) overTime(ctx context.Context) error {
	sides := points.New(o.sessionConfig(), o.Args, o.targetScope())
	defer sides.Close()
	req := changes.Request{LabelSelector: o.Selector, ChunkSize: 500}
	var from, to []handle.Target
	var err error
	if req.From, from, err = sides.Open(ctx, o.From); err != nil {
		return exitTrouble(err)
	}
	if req.To, to, err = sides.Open(ctx, o.To); err != nil {
		return exitTrouble(err)
	}
	req.Pairs = changes.PairTargets(from, to, sides.Names)
	var patch *changes.Patch
	if o.Patch {
		if patch, err = changes.NewPatch(&kubectldiff.DiffProgram{Exec: exec.New(), IOStreams: o.IO}); err != nil {
			return exitTrouble(err)
		}
		patch.ShowSecrets = o.Diff.ShowSecrets
	}
	err = changes.Print(ctx, o.IO.Out, req, o.Output, patch)
	return diffStatus(errors.Is(err, changes.ErrDiffer), ignore(err, changes.ErrDiffer))
}

// targetScope is the namespace a diff over time compares: the one -n
// names, or all.
func (o *diffOptions) targetScope() target.Scope {
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
