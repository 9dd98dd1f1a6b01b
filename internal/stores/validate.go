package stores

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/regctl/regctl/internal/handle"
)

// ValidateCreate runs on obj, which it changes, what the target's store runs
// on a new object before it writes: system fields and generateName, the
// store's BeginCreate in dry run (a service's IP family defaults), the
// strategy's PrepareForCreate, Validate and metadata validation. It writes
// nothing, so a manifest can be checked whole before its first write; what
// depends on etcd (AlreadyExists, the namespace) is left to Create. It reads
// nothing either, but for a service that gets a cluster IP: its dry-run
// allocation needs the allocator, which reads ServiceCIDRs and IPAddresses.
func ValidateCreate(ctx context.Context, t handle.Target, obj runtime.Object) error {
	if _, ok := t.Storage.(rest.Creater); !ok {
		return fmt.Errorf("%s does not accept create", t.Path)
	}
	if usesClusterIP(obj) {
		// The dry-run allocation below needs the allocator ready.
		if err := t.ReadyAllocators(ctx); err != nil {
			return err
		}
	}
	store := t.OwnStore()
	if store == nil {
		// The path creates through another resource's store (bindings,
		// pods/eviction): its checks run in its own Create.
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	rest.FillObjectMetaSystemFields(m)
	if m.GetGenerateName() != "" && m.GetName() == "" {
		m.SetName(store.CreateStrategy.GenerateName(m.GetGenerateName()))
	}
	ctx = RequestContext(ctx, t)
	if store.BeginCreate != nil {
		finish, err := store.BeginCreate(ctx, obj, &metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return err
		}
		defer finish(ctx, false)
	}
	return inFieldOrder(rest.BeforeCreate(store.CreateStrategy, ctx, obj))
}
