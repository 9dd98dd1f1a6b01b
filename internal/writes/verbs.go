package writes

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/regctl/regctl/internal/stores"
)

// Create is the verb of `create`: each object is checked with the store's
// own create validation, then created.
func Create(opts stores.WriteOptions) Verb {
	return Verb{
		Name:    "created",
		Options: opts,
		Check: func(ctx context.Context, _ stores.WriteOptions, p stores.Planned, obj runtime.Object) error {
			return stores.ValidateCreate(ctx, p.Target, asNew(obj))
		},
		Write: func(ctx context.Context, wo stores.WriteOptions, p stores.Planned, obj runtime.Object) (runtime.Object, error) {
			return stores.Create(ctx, p.Target, asNew(obj), wo)
		},
	}
}

// asNew clears metadata.resourceVersion, the one field of an object read
// back with get (now or at a --revision) that the store refuses on a
// create: so that such output can be created again, to restore an object
// as it was. uid, creationTimestamp and the like are set anew by the
// store's create, as on the server.
func asNew(obj runtime.Object) runtime.Object {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetResourceVersion("")
	}
	return obj
}

// Replace is the verb of `replace`: each object is checked with a dry-run
// update, which reads the stored object and runs the whole update on it,
// precondition included, and writes nothing; then updated.
// opts.CurrentVersion is `--force`.
func Replace(opts stores.WriteOptions) Verb {
	return Verb{
		Name:    "replaced",
		Options: opts,
		Check: func(ctx context.Context, wo stores.WriteOptions, p stores.Planned, obj runtime.Object) error {
			if err := hasVersion(obj, wo.CurrentVersion); err != nil {
				return err
			}
			dry := wo
			dry.DryRun = true
			_, err := stores.Update(ctx, p.Target, obj, dry)
			return err
		},
		Write: func(ctx context.Context, wo stores.WriteOptions, p stores.Planned, obj runtime.Object) (runtime.Object, error) {
			return stores.Update(ctx, p.Target, obj, wo)
		},
	}
}

// errNoVersion refuses an object without a resourceVersion, the
// precondition of a replace, unless `--force`.
var errNoVersion = errors.New("no metadata.resourceVersion: replace needs it as a precondition (or `--force` to use the current one)")

func hasVersion(obj runtime.Object, force bool) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	if m.GetResourceVersion() == "" && !force {
		return errNoVersion
	}
	return nil
}

// Validation is kubectl's --validate flag, read as kubectl reads it into the
// fieldValidation it asks the apiserver for.
type Validation string

func (v *Validation) String() string { return strings.ToLower(string(*v)) }
func (v *Validation) Type() string   { return "string" }
func (v *Validation) Set(s string) error {
	switch strings.ToLower(s) {
	case "strict", "true":
		*v = metav1.FieldValidationStrict
	case "warn":
		*v = metav1.FieldValidationWarn
	case "ignore", "false":
		*v = metav1.FieldValidationIgnore
	default:
		return fmt.Errorf("valid values are strict|warn|ignore, not %q", s)
	}
	return nil
}
