package storedvalue

import (
	"context"
	"fmt"

	"k8s.io/apiserver/pkg/storage/value"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
)

// KeyError says that values of a resource are encrypted with a provider and
// key the encryption config given lacks, or that no config is given: a
// matter of the command's flags, the same for every such value, not of one
// value. A command says it once and stops.
type KeyError struct {
	Resource string
	Envelope etcdview.Envelope
	// Config is set when an encryption config was given (without that
	// key).
	Config bool
}

func (e *KeyError) Error() string {
	if !e.Config {
		return fmt.Sprintf("%s are encrypted with %s and no encryption config is given: pass the server's `--encryption-provider-config`", e.Resource, e.Envelope)
	}
	return fmt.Sprintf("%s are encrypted with %s, which the encryption config does not hold: pass the `--encryption-provider-config` that holds that key", e.Resource, e.Envelope)
}

// NeedsKey tells whether data, a value of h's resource as etcd holds it,
// is encrypted with a provider and key h's transformer does not hold (or h
// has none): nil when it is not encrypted, or when the transformer holds
// its key, so that a failure to read it is the value's own.
func NeedsKey(ctx context.Context, h *handle.Handle, data []byte) *KeyError {
	env, ok := etcdview.ParseEnvelope(data)
	if !ok {
		return nil
	}
	tr := h.Transformer()
	if tr == nil {
		return &KeyError{Resource: h.Path, Envelope: env}
	}
	if holds(ctx, tr, env) {
		return nil
	}
	return &KeyError{Resource: h.Path, Envelope: env, Config: true}
}

// holds asks the server's own transformer whether it has the provider and
// key of env. Given a bare prefix (nothing to decrypt), a transformer that
// has them answers with that key's own error; one that lacks them, with
// the error it gives a key it has never heard of in the same provider
// (whose keys may share a prefix, as aescbc's do). Asked only of a value
// that failed.
func holds(ctx context.Context, tr value.Transformer, env etcdview.Envelope) bool {
	absent := env
	absent.Key = "regctl-no-such-key"
	_, _, none := tr.TransformFromStorage(ctx, []byte(absent.Prefix()), value.DefaultContext(""))
	_, _, err := tr.TransformFromStorage(ctx, []byte(env.Prefix()), value.DefaultContext(""))
	return none == nil || err == nil || err.Error() != none.Error()
}
