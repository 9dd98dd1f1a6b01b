// Package storedvalue tells what a value stored in etcd holds that this
// release's kube-apiserver code cannot write back: protobuf fields its types
// do not declare, fields a strict decoder does not know, and a storage
// version more mature than the one it writes. A newer kube-apiserver writes
// such values; the server of this release, and regctl through its stores,
// would drop the fields and downgrade the version on the next write without
// a word.
package storedvalue

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/storage/value"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
)

// FieldsNamed is how many unknown fields a loss names.
const FieldsNamed = 5

// Loss is what a write of a stored value by this release would lose.
type Loss struct {
	Key string
	// Kind is the stored value's group version and kind: "v1 Pod".
	Kind string
	// Fields are the fields its type in this release does not declare,
	// the first FieldsNamed of them.
	Fields []Field
	// StoredAt is the value's group version when it is more mature than
	// Writes, the storage version this release writes.
	StoredAt, Writes string
}

func (l *Loss) Error() string {
	var parts []string
	if len(l.Fields) > 0 {
		parts = append(parts, fmt.Sprintf("it holds fields this release's %s does not declare (%s): %s", l.Kind, l.FieldsWhy(), joinFields(l.Fields)))
	}
	if l.StoredAt != "" {
		parts = append(parts, fmt.Sprintf("it is stored at %s, which is newer than the %s this release writes (written by a newer kube-apiserver)", l.StoredAt, l.Writes))
	}
	return l.Key + ": " + strings.Join(parts, "; ")
}

// FieldsWhy says where the unknown fields come from.
func (l *Loss) FieldsWhy() string {
	for _, f := range l.Fields {
		if f.Newer {
			return "written by a newer kube-apiserver"
		}
	}
	return "written by another kube-apiserver release, or removed in this one"
}

func joinFields(fields []Field) string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Path
	}
	return strings.Join(names, ", ")
}

// Newer tells whether the group version stored is more mature than writes
// in the same group, in Kubernetes' version order (v2 over v1, GA over
// beta, beta over alpha, v1beta2 over v1beta1): a value only a newer
// kube-apiserver would store.
func Newer(stored, writes string) bool {
	s, err1 := schema.ParseGroupVersion(stored)
	w, err2 := schema.ParseGroupVersion(writes)
	if err1 != nil || err2 != nil || s.Group != w.Group {
		return false
	}
	return version.CompareKubeAwareVersionStrings(s.Version, w.Version) > 0
}

// CustomResource tells whether h's objects are custom resources: their
// fields are their CRD's, which every release reads alike, and their
// storage version is the CRD's choice, not the release's.
func CustomResource(h *handle.Handle) bool {
	if h.Storage == nil {
		return false
	}
	_, ok := h.Storage.New().(*unstructured.Unstructured)
	return ok
}

// Check reads data, the value stored at key as etcd holds it, and returns
// what a write of it by this release would lose, nil when nothing. A value
// it cannot decrypt or decode is left to the store, which says why.
func Check(ctx context.Context, h *handle.Handle, key string, data []byte) (*Loss, error) {
	if CustomResource(h) {
		return nil, nil
	}
	if tr := h.Transformer(); tr != nil {
		plain, _, err := tr.TransformFromStorage(ctx, data, value.DefaultContext(key))
		if err != nil {
			return nil, nil
		}
		data = plain
	}
	var gvk schema.GroupVersionKind
	var fields []Field
	switch mediaType := etcdview.MediaType(data); mediaType {
	case apiruntime.ContentTypeProtobuf:
		var err error
		if gvk, fields, err = ProtobufFields(data, FieldsNamed); err != nil {
			return nil, nil
		}
	default:
		decoder := StrictDecoder(h, mediaType)
		if decoder == nil {
			return nil, nil
		}
		_, got, err := decoder.Decode(data, nil, nil)
		if got == nil {
			return nil, nil
		}
		gvk, fields = *got, StrictFields(err, FieldsNamed)
	}
	loss := &Loss{Key: key, Kind: strings.TrimPrefix(gvk.GroupVersion().String()+" "+gvk.Kind, " "), Fields: fields}
	if stored, writes := gvk.GroupVersion().String(), h.Route.StorageVersion; Newer(stored, writes) {
		loss.StoredAt, loss.Writes = stored, writes
	}
	if len(loss.Fields) == 0 && loss.StoredAt == "" {
		return nil, nil
	}
	return loss, nil
}
