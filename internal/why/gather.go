package why

import (
	"context"
	"encoding/json"
	"fmt"
	gopath "path"
	"sort"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/stores"
)

// stored is an object read from etcd, with what the report needs of it.
type stored struct {
	Object
	owners []metav1.OwnerReference
	// ext is the object in its served version, for the few kinds whose
	// fields say what holds them (pods, claims); nil for the others.
	ext map[string]any
}

// contents are the objects etcd holds in a namespace (in every namespace,
// and cluster-scoped ones, for an empty one).
type contents struct {
	objects []*stored
	// leftovers are keys in the namespace under no stored resource's
	// prefix: objects of a CRD that is gone.
	leftovers []*stored
	// unread are the resources whose values could not be read at all
	// (encrypted with a key the flags do not give), and why.
	unread []Unread
}

// valueUnread marks the objects of a resource none of whose values could
// be read: the resource's own step says why, once.
const valueUnread = "its value could not be read"

// withFields are the paths whose objects' own fields say what holds them.
var withFields = map[string]bool{"pods": true, "persistentvolumeclaims": true, "persistentvolumes": true}

// gather reads what etcd holds in namespace ns at rev: one keys-only pass
// over the etcd prefix finds which resources hold keys there (and the keys
// no resource claims), then each of those resources is listed in ns
// through its store, as the server reads it. A resource that holds
// nothing there costs nothing but its share of the keys-only pass.
func gather(ctx context.Context, ks handle.Keyspace, ns string, rev int64) (*contents, error) {
	root := strings.TrimSuffix(gopath.Join("/", ks.EtcdPrefix), "/") + "/"
	byPrefix := map[string]*handle.Handle{}
	var other []*handle.Handle
	for _, h := range ks.Handles {
		if h.OwnStore() == nil {
			continue
		}
		p, err := h.KeyPrefix("")
		if err != nil {
			return nil, err
		}
		if _, dup := byPrefix[p]; dup {
			continue // the same objects served under a second path
		}
		byPrefix[p] = h
		if len(h.Route.EtcdServers) > 0 {
			other = append(other, h) // its keys are on other servers
		}
	}
	hit := map[*handle.Handle]bool{}
	// keys are the keys of each resource in ns, to name the objects of
	// one whose values cannot be read (none are kept for every namespace).
	keys := map[*handle.Handle][]string{}
	for _, h := range other {
		hit[h] = h.Resource.Namespaced || ns == ""
	}
	var leftoverKeys []string
	err := etcdview.PagesAt(ctx, ks.Client, root, root, rev, keysPage, true, func(kvs []*mvccpb.KeyValue) error {
		for _, kv := range kvs {
			key := string(kv.Key)
			h, rest := claim(byPrefix, root, key)
			switch {
			case h != nil && !h.Resource.Namespaced:
				hit[h] = hit[h] || ns == ""
			case h != nil && ns == "":
				hit[h] = true
			case h != nil && strings.HasPrefix(rest, ns+"/"):
				hit[h] = true
				keys[h] = append(keys[h], key)
			case ns != "" && inNamespace(strings.TrimPrefix(key, root), ns):
				leftoverKeys = append(leftoverKeys, key)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the keys under %s: %w", root, err)
	}
	out := &contents{}
	for _, h := range ks.Handles {
		if !hit[h] {
			continue
		}
		err := out.list(ctx, handle.Target{Handle: h, Namespace: ns}, rev)
		if err != nil && !stores.Unreadable(ctx, err) {
			return nil, err
		}
		if err != nil {
			// The flags lack what reads this resource: its objects are
			// still here, named by their keys.
			out.unread = append(out.unread, Unread{Resource: h.Path, Reason: err.Error()})
			for _, key := range keys[h] {
				n, name := namespaceAndName(handle.Target{Handle: h}, key)
				out.objects = append(out.objects, &stored{Object: Object{Resource: h.Path, Namespace: n, Name: name, Key: key, Unreadable: valueUnread}})
			}
		}
	}
	for _, key := range leftoverKeys {
		o, err := leftover(ctx, ks, root, key, rev)
		if err != nil {
			return nil, err
		}
		out.leftovers = append(out.leftovers, o)
	}
	return out, nil
}

// claim is the stored resource whose prefix key falls under (the longest,
// as services/specs/ over services/), and the rest of the key after it.
func claim(byPrefix map[string]*handle.Handle, root, key string) (*handle.Handle, string) {
	for i := len(key) - 1; i >= len(root); i-- {
		if key[i] != '/' {
			continue
		}
		if h, ok := byPrefix[key[:i+1]]; ok {
			return h, key[i+1:]
		}
	}
	return nil, ""
}

// inNamespace tells whether a key no resource claims is an object of
// namespace ns as the server lays keys out: RESOURCE/NAMESPACE/NAME, or
// GROUP/RESOURCE/NAMESPACE/NAME for a custom resource.
func inNamespace(rest, ns string) bool {
	segs := strings.Split(rest, "/")
	return len(segs) >= 3 && segs[len(segs)-2] == ns
}

// list reads t's objects through its store at rev.
func (c *contents) list(ctx context.Context, t handle.Target, rev int64) error {
	var unread []*stored
	opts := stores.ListOptions{Revision: rev, ChunkSize: objectsPage, OnError: func(key string, err error) {
		ns, name := namespaceAndName(t, key)
		unread = append(unread, &stored{Object: Object{Resource: t.Path, Namespace: ns, Name: name, Key: key, Unreadable: err.Error()}})
	}}
	err := stores.List(ctx, t, opts, func(p stores.Page) error {
		for _, item := range p.Items {
			o, err := c.read(t, item)
			if err != nil {
				return err
			}
			c.objects = append(c.objects, o)
		}
		return nil
	})
	if !stores.WalkedToEnd(err) {
		return fmt.Errorf("listing %s: %w", t.Path, err)
	}
	c.objects = append(c.objects, unread...)
	return nil
}

func (c *contents) read(t handle.Target, item runtime.Object) (*stored, error) {
	m, err := meta.Accessor(item)
	if err != nil {
		return nil, fmt.Errorf("reading the metadata of a %s: %w", t.Path, err)
	}
	key, err := t.Key(m.GetNamespace(), m.GetName())
	if err != nil {
		return nil, err
	}
	o := &stored{Object: objectOf(t.Path, key, m), owners: m.GetOwnerReferences()}
	if withFields[t.Path] {
		ext, err := stores.ListItemToExternal(t, item)
		if err != nil {
			return nil, err
		}
		if o.ext, err = runtime.DefaultUnstructuredConverter.ToUnstructured(ext); err != nil {
			return nil, fmt.Errorf("reading %s %s: %w", t.Path, m.GetName(), err)
		}
	}
	return o, nil
}

func objectOf(resource, key string, m metav1.Object) Object {
	return Object{
		Resource: resource, Namespace: m.GetNamespace(), Name: m.GetName(), Key: key, UID: string(m.GetUID()),
		DeletionTimestamp: m.GetDeletionTimestamp(), Finalizers: finalizersOf(m.GetFinalizers()),
	}
}

// namespaceAndName are the namespace and name a key of t's store names.
func namespaceAndName(t handle.Target, key string) (string, string) {
	prefix, err := t.KeyPrefix("")
	if err != nil {
		return "", key
	}
	rest := strings.TrimPrefix(key, prefix)
	if ns, name, ok := strings.Cut(rest, "/"); ok && t.Resource.Namespaced {
		return ns, name
	}
	return "", rest
}

// leftover reads a key no stored resource claims. A custom resource's
// value is JSON unless the resource is encrypted: its metadata says what
// holds it even with its CRD gone.
func leftover(ctx context.Context, ks handle.Keyspace, root, key string, rev int64) (*stored, error) {
	segs := strings.Split(strings.TrimPrefix(key, root), "/")
	resource := strings.Join(segs[:len(segs)-2], "/")
	if len(segs) == 4 {
		resource = segs[1] + "." + segs[0] // GROUP/RESOURCE: as kubectl names it
	}
	o := &stored{Object: Object{Resource: resource, Namespace: segs[len(segs)-2], Name: segs[len(segs)-1], Key: key, Leftover: true}}
	kv, err := etcdview.ValueAt(ctx, ks.Client, key, rev)
	if err != nil || kv == nil {
		return o, err
	}
	var v struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(kv.Value, &v); err != nil {
		o.Unreadable = "not JSON (encrypted, or of an API removed from Kubernetes): its metadata cannot be read without its resource"
		return o, nil
	}
	o.Object = objectOf(resource, key, &v.Metadata)
	o.Leftover, o.owners = true, v.Metadata.OwnerReferences
	return o, nil
}

// sortObjects orders objects by resource, namespace and name.
func sortObjects(objs []*stored) {
	sort.SliceStable(objs, func(i, j int) bool {
		a, b := objs[i], objs[j]
		if a.Resource != b.Resource {
			return a.Resource < b.Resource
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
}
