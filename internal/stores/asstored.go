package stores

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/storage"
	storeerr "k8s.io/apiserver/pkg/storage/errors"

	"github.com/regctl/regctl/internal/handle"
)

// CreateAsStored writes obj, an object as a store held it (read at another
// revision or from a snapshot), through the target's store exactly as it
// is: its uid, creationTimestamp, generation, managedFields and status
// kept, where Create would make them anew. What the store does below its
// strategy is done as the server does it: the store's create hook (a
// service's cluster IPs and node ports, which it allocates as given, or
// refuses when they are taken), its key, the TTL of its objects (an
// event's lease), encoding at its storage version and encryption with the
// first key, and etcd's own check that the key is free, in the transaction
// that writes it: a concurrent create wins, and this one is AlreadyExists.
// The object must be in the target's namespace, which must exist and not
// be terminating. It returns the stored object in the served version.
func CreateAsStored(ctx context.Context, t handle.Target, obj runtime.Object, opts WriteOptions) (runtime.Object, error) {
	if t.Store == nil {
		return nil, unwritten(fmt.Errorf("%s is not stored in etcd", t.Path))
	}
	if err := checkNamespace(ctx, t, obj, true, opts.Namespaces); err != nil {
		return nil, unwritten(err)
	}
	// The storage layer sets what etcd decides: the resourceVersion.
	obj = obj.DeepCopyObject()
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, unwritten(err)
	}
	m.SetResourceVersion("")
	ctx = RequestContext(ctx, t)
	options := &metav1.CreateOptions{DryRun: opts.dryRun(), FieldManager: opts.manager()}
	finish := func(context.Context, bool) {}
	if t.Store.BeginCreate != nil {
		if usesClusterIP(obj) {
			if err := t.ReadyAllocators(ctx); err != nil {
				return nil, unwritten(err)
			}
		}
		if finish, err = t.Store.BeginCreate(ctx, obj, options); err != nil {
			return nil, unwritten(err)
		}
	}
	out, err := createAsStored(ctx, t, m.GetName(), obj, opts.DryRun)
	finish(ctx, err == nil)
	if err != nil {
		return nil, err
	}
	return ToExternal(t, out)
}

func createAsStored(ctx context.Context, t handle.Target, name string, obj runtime.Object, dryRun bool) (runtime.Object, error) {
	key, err := t.Store.KeyFunc(ctx, name)
	if err != nil {
		return nil, unwritten(err)
	}
	var ttl uint64
	if t.Store.TTLFunc != nil {
		if ttl, err = t.Store.TTLFunc(obj, 0, false); err != nil {
			return nil, unwritten(err)
		}
	}
	out := t.Store.NewFunc()
	if err := t.Store.Storage.Create(ctx, key, obj, out, ttl, dryRun); err != nil {
		if dryRun || OutcomeOf(ctx, err) != Uncertain {
			return nil, storeerr.InterpretCreateError(err, t.Store.DefaultQualifiedResource, name)
		}
		// obj carries its uid from the source: what etcd holds says
		// whether the create happened.
		return settleCreate(ctx, t, obj, err)
	}
	if t.Store.Decorator != nil {
		t.Store.Decorator(out)
	}
	return out, nil
}

// ReplaceAsStored writes obj, an object as a store held it, over the one
// stored now under its name, exactly as it is (see CreateAsStored), with
// the stored object's uid and resourceVersion as preconditions: a value
// written since, or another object of the same name, is a Conflict and
// nothing is written. A stored value this release would lose part of is
// not written over (LossError). The write changes no allocation: a
// service stays with the cluster IPs and node ports it has, and the
// caller refuses one that would not.
func ReplaceAsStored(ctx context.Context, t handle.Target, obj runtime.Object, uid types.UID, resourceVersion string, opts WriteOptions) (runtime.Object, error) {
	if t.Store == nil {
		return nil, unwritten(fmt.Errorf("%s is not stored in etcd", t.Path))
	}
	if err := checkNamespace(ctx, t, obj, false, opts.Namespaces); err != nil {
		return nil, unwritten(err)
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, unwritten(err)
	}
	name := m.GetName()
	ctx = RequestContext(ctx, t)
	key, err := t.Store.KeyFunc(ctx, name)
	if err != nil {
		return nil, unwritten(err)
	}
	out := t.Store.NewFunc()
	pre := &storage.Preconditions{UID: &uid, ResourceVersion: &resourceVersion}
	err = t.Store.Storage.GuaranteedUpdate(ctx, key, out, false, pre, func(existing runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
		if err := checkStored(ctx, t, existing, opts); err != nil {
			return nil, nil, err
		}
		// The storage checked the uid and resourceVersion compared
		// (the preconditions) on what it read.
		next := obj.DeepCopyObject()
		nm, _ := meta.Accessor(next)
		nm.SetResourceVersion(resourceVersion)
		var ttl *uint64
		if t.Store.TTLFunc != nil {
			n, err := t.Store.TTLFunc(next, 0, true)
			if err != nil {
				return nil, nil, err
			}
			ttl = &n
		}
		return next, ttl, nil
	}, opts.DryRun, nil)
	if err != nil {
		return nil, storeerr.InterpretUpdateError(err, t.Store.DefaultQualifiedResource, name)
	}
	if t.Store.Decorator != nil {
		t.Store.Decorator(out)
	}
	return ToExternal(t, out)
}
