package storedvalue

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apiserver/pkg/storage/value"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
)

// KeyError says that values of a resource are encrypted with a provider and
// key the encryption config given lacks, or that no config is given, or
// that the config's key of that name does not decrypt them: a matter of
// the command's flags, the same for every such value, not of one value. A
// command says it once, and never calls the values damaged: with the
// server's config they may read fine.
type KeyError struct {
	Resource string
	Envelope etcdview.Envelope
	// Config is set when an encryption config was given (without that
	// key).
	Config bool
	// Fails is set when the config holds a key of the envelope's name
	// that does not decrypt the values (invalid padding, a failed
	// authentication, bytes of no known encoding): its key is likely not
	// the server's. Values counts them, where known.
	Fails  error
	Values int
}

func (e *KeyError) Error() string {
	switch {
	case e.Fails != nil:
		values := e.Resource
		if e.Values > 0 {
			values = fmt.Sprintf("%d %s", e.Values, e.Resource)
		}
		return fmt.Sprintf("%s encrypted with %s could not be decrypted with the encryption config's %s %q (%v): the config's key is likely not the server's; pass the server's `--encryption-provider-config`", values, e.Envelope, e.Envelope.Provider, e.Envelope.Key, e.Fails)
	case !e.Config:
		return fmt.Sprintf("%s are encrypted with %s and no encryption config is given: pass the server's `--encryption-provider-config`", e.Resource, e.Envelope)
	}
	return fmt.Sprintf("%s are encrypted with %s, which the encryption config does not hold: pass the `--encryption-provider-config` that holds that key", e.Resource, e.Envelope)
}

// KeyFails tells, of data, a value of h's resource that could not be read
// with err, whether the encryption config holds its provider and key but
// that key does not decrypt it: it fails to (err is the transformer's), or
// it yields bytes of no encoding the server writes (a wrong AES key passes
// the padding check once in a few hundred values). A KeyError with Fails
// set, nil when the value is not encrypted, its key is missing (NeedsKey),
// or it decrypts to what a server writes (the value's own fault).
func KeyFails(ctx context.Context, h *handle.Handle, key string, data []byte, err error) *KeyError {
	env, ok := etcdview.ParseEnvelope(data)
	tr := h.Transformer()
	if !ok || tr == nil || !holds(ctx, tr, env) {
		return nil
	}
	plain, _, terr := tr.TransformFromStorage(ctx, data, value.DefaultContext(key))
	switch {
	case terr != nil:
		return &KeyError{Resource: h.Path, Envelope: env, Config: true, Fails: terr}
	case etcdview.MediaType(plain) == etcdview.UnknownMediaType:
		return &KeyError{Resource: h.Path, Envelope: env, Config: true, Fails: errNoEncoding}
	}
	return nil
}

// errNoEncoding is what a value decrypted to bytes of no known encoding
// says: the key that decrypted it is not the one that encrypted it.
var errNoEncoding = errors.New("it decrypts to bytes of no encoding a server writes")

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
