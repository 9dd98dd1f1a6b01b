package stores

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/storage"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storedvalue"
)

// explain turns a storage error on one object into a message that names the
// etcd key and, for values the store could not read, why: the encryption
// provider and key it was written with, or its encoding. A value encrypted
// with a key the encryption config lacks (or with no config given) is a
// *storedvalue.KeyError, the same for every such value. API errors that
// already say what is wrong (NotFound, Invalid) pass through unchanged.
func explain(ctx context.Context, t handle.Target, name string, err error) error {
	if !unreadable(ctx, err) {
		return err
	}
	key, kerr := t.Key(t.Namespace, name)
	if kerr != nil {
		return err
	}
	return explainKey(ctx, t.Handle, key, 0, err)
}

// explainAt is explain for a read at revision rev.
func explainAt(ctx context.Context, t handle.Target, name string, rev int64, err error) error {
	if !unreadable(ctx, err) {
		return fmt.Errorf("reading %s %q at revision %d: %w", t.Path, name, rev, err)
	}
	key, kerr := t.Key(t.Namespace, name)
	if kerr != nil {
		return err
	}
	return explainKey(ctx, t.Handle, key, rev, err)
}

// explainKey looks at the value of key at revision rev (0: now), on the
// etcd that holds the resource of h.
func explainKey(ctx context.Context, h *handle.Handle, key string, rev int64, err error) error {
	err = valueFault(err)
	c, cerr := h.Client(ctx)
	if cerr != nil {
		return fmt.Errorf("reading %s: %w", key, err)
	}
	kv, verr := etcdview.ValueAt(ctx, c, key, rev)
	if verr != nil || kv == nil {
		return fmt.Errorf("reading %s: %w", key, err)
	}
	return explainValue(ctx, h, key, kv.Value, err)
}

// explainValue says why the store could not read data, the value of key,
// with err.
func explainValue(ctx context.Context, h *handle.Handle, key string, data []byte, err error) error {
	err = valueFault(err)
	if missing := storedvalue.NeedsKey(ctx, h, data); missing != nil {
		// The flags' doing, not the value's: every value so encrypted
		// fails alike.
		return missing
	}
	if fails := storedvalue.KeyFails(ctx, h, key, data, err); fails != nil {
		// The flags' doing too, until proven otherwise (a list tells by
		// the values the same key decrypts).
		return fails
	}
	if env, ok := etcdview.ParseEnvelope(data); ok {
		return fmt.Errorf("reading %s: cannot decrypt the value encrypted with %s: %w", key, env, err)
	}
	return fmt.Errorf("reading %s: cannot decode the stored value (%s, %d bytes): %w", key, etcdview.MediaType(data), len(data), err)
}

// valueFault is what a store said about the one value it could not read,
// without the key the message names anyway. The storage says it as a
// StorageError; since Kubernetes 1.37 a list passes it on flattened into
// a StoreReadError ("failed to read one or more pods from the storage:
// StorageError: corrupt object, Code: 7, Key: K, ResourceVersion: 0,
// AdditionalErrorMsg: CAUSE"), whose text alone is left of it.
func valueFault(err error) error {
	var se *storage.StorageError
	if errors.As(err, &se) && errors.Unwrap(se) != nil {
		return errors.Unwrap(se)
	}
	if apierrors.ReasonForError(err) != metav1.StatusReasonStoreReadError {
		return err
	}
	if _, cause, ok := strings.Cut(err.Error(), ", AdditionalErrorMsg: "); ok && cause != "" {
		return errors.New(cause)
	}
	return err
}
