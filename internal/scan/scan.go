package scan

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/storage/value"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/routetable"
	"github.com/regctl/regctl/internal/storedvalue"
)

// Options are a scan's.
type Options struct {
	// Sections to report; every one when empty.
	Sections []string
	// ByNamespace splits each namespaced resource's figures by namespace.
	ByNamespace bool
	// PageSize is how many keys one range request reads: DefaultPageSize
	// when 0; negative reads every key in one request (see PageSize).
	PageSize int64
	// Revision is the etcd revision to read at; 0 is now.
	Revision int64
	// Progress, when set, is called about five times a second while the
	// scan runs.
	Progress func(Progress)
	// OnFinding, when set, is called with every finding, from one
	// goroutine at a time: the report lists at most 100 per resource and
	// reason.
	OnFinding func(Finding)
	// Under, when set, are the only key prefixes read: a resource's, or a
	// namespace of it.
	Under []string
	// Losses decodes every value to find what a rewrite by this release
	// would lose (unknown-fields and newer-version findings), whatever
	// the sections.
	Losses bool
}

// Progress is how far a scan is.
type Progress struct {
	Keys, Bytes, Total int64
	Elapsed            time.Duration
}

// target is one stored resource: the handle whose store owns a key prefix.
type target struct {
	h      *handle.Handle
	order  int
	prefix string
	// group and plural name a custom resource, to find its CRD.
	group, plural string
	// custom is set for a custom resource.
	custom bool
}

func newTarget(h *handle.Handle, prefix string) *target {
	return &target{h: h, prefix: prefix, group: h.Resource.Group, plural: h.Route.Resource, custom: storedvalue.CustomResource(h)}
}

// Run scans every key under the etcd prefix of ks on its client (that of
// `--etcd-servers`), and the prefix of each resource its handles store on
// other servers. It writes nothing.
func Run(ctx context.Context, ks handle.Keyspace, opts Options) (*Report, error) {
	main, etcdPrefix, handles := ks.Client, ks.EtcdPrefix, ks.Handles
	sections := opts.Sections
	if len(sections) == 0 {
		sections = Sections
	}
	s := &scanner{
		opts:     opts,
		sections: map[string]bool{},
		root:     strings.TrimSuffix(etcdPrefix, "/") + "/",
	}
	for _, sec := range sections {
		s.sections[sec] = true
	}
	s.decrypt = s.sections[Encryption] || s.sections[Encoding] || s.sections[Versions] || s.sections[Corrupt] || opts.Losses
	s.decode = s.sections[Versions] || s.sections[Corrupt] || opts.Losses
	var elsewhere []*target
	claimed := map[string]bool{}
	for _, h := range handles {
		if h.Route.Store != routetable.StoreOwn || h.OwnStore() == nil {
			continue
		}
		prefix, err := h.KeyPrefix("")
		if err != nil {
			return nil, err
		}
		if claimed[prefix] {
			// Several paths store under one prefix (a resource in two
			// versions): the keys are the first's, as kubectl resolves.
			continue
		}
		claimed[prefix] = true
		t := newTarget(h, prefix)
		if len(h.Route.EtcdServers) > 0 {
			elsewhere = append(elsewhere, t)
		} else {
			s.targets = append(s.targets, t)
		}
	}
	if len(opts.Under) == 0 {
		for _, t := range s.targets {
			if t.group == "" && t.plural == "namespaces" {
				s.namespaces = t
			}
		}
	}
	all := append(slices.Clone(s.targets), elsewhere...)
	for i, t := range all {
		t.order = i
	}
	// Longest first, so that a key belongs to the most specific prefix.
	s.byLength = slices.Clone(s.targets)
	sort.SliceStable(s.byLength, func(i, j int) bool { return len(s.byLength[i].prefix) > len(s.byLength[j].prefix) })

	// What is read: every key under the prefix, or what opts.Under
	// names, each on the etcd that stores it.
	walks := []string{s.root}
	if len(opts.Under) > 0 {
		walks = opts.Under
	}
	onMain := slices.DeleteFunc(slices.Clone(walks), func(w string) bool { return elsewhereOwns(elsewhere, w) })
	var total int64
	rev := opts.Revision
	for _, w := range onMain {
		n, r, err := etcdview.CountAt(ctx, main, w, rev)
		if err != nil {
			return nil, err
		}
		total, rev = total+n, r
	}
	if rev == 0 {
		// Nothing to read on the main etcd; the report still says when.
		_, r, err := etcdview.CountAt(ctx, main, s.root, 0)
		if err != nil {
			return nil, err
		}
		rev = r
	}
	clients := make([]*clientv3.Client, len(elsewhere))
	under := make([][]string, len(elsewhere))
	for i, t := range elsewhere {
		for _, w := range walks {
			switch {
			case w == s.root:
				under[i] = append(under[i], t.prefix)
			case strings.HasPrefix(w, t.prefix):
				under[i] = append(under[i], w)
			}
		}
		if len(under[i]) == 0 {
			continue
		}
		var err error
		if clients[i], err = t.h.Client(ctx); err != nil {
			return nil, err
		}
		for _, w := range under[i] {
			n, _, err := etcdview.CountAt(ctx, clients[i], w, 0)
			if err != nil {
				return nil, err
			}
			total += n
		}
	}
	s.total = total

	stop := s.report(opts.Progress)
	err := s.run(ctx, func(pages chan<- page) error {
		for _, w := range onMain {
			err := etcdview.PagesAt(ctx, main, w, w, rev, s.pageSize(), false, func(kvs []*mvccpb.KeyValue) error {
				return send(ctx, pages, page{kvs: kvs})
			})
			if err != nil {
				return err
			}
		}
		for i, t := range elsewhere {
			for _, w := range under[i] {
				err := etcdview.PagesAt(ctx, clients[i], w, w, 0, s.pageSize(), false, func(kvs []*mvccpb.KeyValue) error {
					return send(ctx, pages, page{kvs: kvs, only: t})
				})
				if err != nil {
					return err
				}
			}
		}
		return nil
	})
	stop()
	if ctx.Err() != nil {
		// Cut short: say why (an interrupt, a deadline), not where.
		return nil, context.Cause(ctx)
	}
	if err != nil {
		return nil, err
	}
	return s.result(etcdPrefix, rev, sections, all), nil
}

// elsewhereOwns tells whether the keys under w are on another etcd than
// the main one: under a resource's prefix that --etcd-servers-overrides
// stores elsewhere.
func elsewhereOwns(elsewhere []*target, w string) bool {
	return slices.ContainsFunc(elsewhere, func(t *target) bool { return strings.HasPrefix(w, t.prefix) })
}

// chunk is how many keys a worker takes at a time: a range response is
// split among the workers, so that large pages keep every core busy.
const chunk = 250

func send(ctx context.Context, pages chan<- page, p page) error {
	for kvs := p.kvs; len(kvs) > 0; {
		part := page{kvs: kvs[:min(len(kvs), chunk)], only: p.only}
		kvs = kvs[len(part.kvs):]
		select {
		case pages <- part:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}

type scanner struct {
	opts            Options
	sections        map[string]bool
	decrypt, decode bool
	root            string
	targets         []*target // on the main etcd
	byLength        []*target
	total           int64
	keys, bytes     atomic.Int64
	tallies         []*tally
	served          served
	// namespaces is the namespaces' target when every key is read: only
	// then can objects in a namespace that does not exist be told.
	namespaces *target
}

func (s *scanner) pageSize() int64 {
	if s.opts.PageSize != 0 {
		return s.opts.PageSize
	}
	return DefaultPageSize
}

// PageSize is Options.PageSize for a command's --chunk-size, which is 0 or
// more, 0 reading every key at once as kubectl's does.
func PageSize(chunkSize int64) int64 {
	if chunkSize == 0 {
		return -1
	}
	return chunkSize
}

// DefaultPageSize is how many keys a range request of a scan reads: pages
// larger than a list's 500 make fewer requests, at a few MiB of values each
// (each is a bounded window of the keys: see etcdview.PagesAt).
const DefaultPageSize = 2500

// page is one range response; only is the target every key of it
// belongs to, for a resource on its own etcd.
type page struct {
	kvs  []*mvccpb.KeyValue
	only *target
}

// run reads pages on this goroutine and looks at them on every core, a
// chunk at a time: the next page is read while the last is decoded.
func (s *scanner) run(ctx context.Context, read func(chan<- page) error) error {
	workers := max(1, runtime.GOMAXPROCS(0))
	// A worker holds one CRD's serving storage at a time; one more
	// is the next CRD's, which another worker may start on.
	s.served.keep = workers + 1
	pages := make(chan page, workers)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range workers {
		t := newTally()
		if fn := s.opts.OnFinding; fn != nil {
			t.onFinding = func(f Finding) {
				mu.Lock()
				defer mu.Unlock()
				fn(f)
			}
		}
		s.tallies = append(s.tallies, t)
		wg.Go(func() {
			for p := range pages {
				for _, kv := range p.kvs {
					s.look(ctx, t, p.only, kv)
				}
			}
		})
	}
	err := read(pages)
	close(pages)
	wg.Wait()
	return err
}

// report calls fn with the scan's progress until the returned stop.
func (s *scanner) report(fn func(Progress)) (stop func()) {
	if fn == nil {
		return func() {}
	}
	return render.Ticking(func(elapsed time.Duration) {
		fn(Progress{Keys: s.keys.Load(), Bytes: s.bytes.Load(), Total: s.total, Elapsed: elapsed})
	})
}

// owner is the target whose prefix key is under, nil for an orphan.
func (s *scanner) owner(key string, last *target) *target {
	if last != nil && strings.HasPrefix(key, last.prefix) {
		return last
	}
	for _, t := range s.byLength {
		if strings.HasPrefix(key, t.prefix) {
			return t
		}
	}
	return nil
}

// look accounts for one key.
func (s *scanner) look(ctx context.Context, tl *tally, only *target, kv *mvccpb.KeyValue) {
	key := string(kv.Key)
	size := int64(len(kv.Value))
	s.keys.Add(1)
	s.bytes.Add(size)
	tl.keys++
	tl.bytes += size
	t := only
	if t == nil {
		t = s.owner(key, tl.last)
		tl.last = t
	}
	if t == nil {
		if isRangeAllocation(kv.Value) {
			tl.allocation(key, size)
			return
		}
		if isEndpointLease(kv) {
			tl.lease(key, size)
			return
		}
		tl.orphan(s.root, key, size, s.sections[Orphans])
		return
	}
	namespace := ""
	if s.namespaces != nil && s.sections[Orphans] {
		switch {
		case t == s.namespaces:
			tl.namespaces[strings.TrimPrefix(key, t.prefix)] = true
		case t.h.Resource.Namespaced:
			ns, _, _ := strings.Cut(strings.TrimPrefix(key, t.prefix), "/")
			tl.inNamespace[resourceKey{t, ns}]++
		}
	}
	if s.opts.ByNamespace && t.h.Resource.Namespaced {
		namespace, _, _ = strings.Cut(strings.TrimPrefix(key, t.prefix), "/")
	}
	acc := tl.resource(t, namespace)
	acc.keys++
	acc.bytes += size
	acc.largest = keepLargest(acc.largest, SizedKey{Key: key, Bytes: size})
	if !s.decrypt {
		return
	}
	data, ok := s.decrypted(ctx, tl, t, acc, namespace, key, kv.Value)
	if !ok {
		return
	}
	mediaType := etcdview.MediaType(data)
	acc.encodings[mediaType]++
	if !s.decode {
		return
	}
	s.decoded(tl, t, acc, key, data, mediaType)
}

// decrypted reads a value as the store's transformer does, counting how it
// is encrypted; ok is false when it cannot be read.
func (s *scanner) decrypted(ctx context.Context, tl *tally, t *target, acc *resourceTally, namespace, key string, data []byte) ([]byte, bool) {
	writes := t.h.Route.Encryption
	encrypts := writes != "" && writes != identity
	tr := t.h.Transformer()
	env, enveloped := etcdview.ParseEnvelope(data)
	if !enveloped {
		acc.encryption[identity]++
		if encrypts {
			acc.plaintext++
			detail := fmt.Sprintf("stored in plain text; the encryption config writes %s with %s", t.h.Path, writes)
			if tr != nil {
				if _, _, err := tr.TransformFromStorage(ctx, data, value.DefaultContext(key)); err != nil {
					detail += ", and the server cannot read it: the config has no identity provider"
				}
			}
			tl.find(Encryption, ReasonPlaintext, t, key, detail)
		}
		return data, true
	}
	name := env.String()
	if env.KeyID != "" {
		name += " (key ID " + env.KeyID + ")"
	}
	acc.encryption[name]++
	if tr == nil {
		acc.unreadable++
		acc.unread++
		acc.encodings[unknownEncoding]++
		tl.findMissing(t, key, fmt.Sprintf("encrypted with %s: no encryption config is given; pass the server's `--encryption-provider-config`", name), storedvalue.NeedsKey(ctx, t.h, data))
		return nil, false
	}
	plain, stale, err := tr.TransformFromStorage(ctx, data, value.DefaultContext(key))
	// Bytes of no known encoding, decrypted, are a wrong AES key's that
	// passed the padding check.
	if err != nil || etcdview.MediaType(plain) == etcdview.UnknownMediaType {
		acc.unreadable++
		acc.unread++
		acc.encodings[unknownEncoding]++
		if missing := storedvalue.NeedsKey(ctx, t.h, data); missing != nil {
			tl.findMissing(t, key, fmt.Sprintf("encrypted with %s, which the encryption config does not hold", name), missing)
			return nil, false
		}
		fails := storedvalue.KeyFails(ctx, t.h, key, data, err)
		if fails == nil {
			fails = &storedvalue.KeyError{Resource: t.h.Path, Envelope: env, Config: true, Fails: err}
		}
		// Whether the key is the config's or the value is damaged is
		// told once every value is read (tally.keyFailed).
		tl.keyFails = append(tl.keyFails, keyFail{t: t, namespace: namespace, key: key, envelope: env.String(), name: name, err: fails})
		return nil, false
	}
	tl.decrypted[env.String()]++
	if stale {
		acc.stale++
		tl.find(Encryption, ReasonStaleKey, t, key, fmt.Sprintf("encrypted with %s; the encryption config writes %s", name, writes))
	}
	return plain, true
}

// decoded decodes a value with the store's codec, as the server reads it,
// and checks it is the object its key says.
func (s *scanner) decoded(tl *tally, t *target, acc *resourceTally, key string, data []byte, mediaType string) {
	h := t.h
	if t.custom {
		// A custom resource is read by the storage the CRD handler
		// builds for it, whose codec holds the CRD's schemas. A CRD the
		// handler cannot build serves nothing; its values are still
		// read as they are stored.
		if served := s.served.of(t); served != nil {
			h = served
		}
	}
	codec := h.StorageCodec()
	if codec == nil {
		return
	}
	obj, gvk, unknown, strict, err := decode(h, t.custom, codec, data, mediaType)
	if err != nil {
		acc.unread++
		acc.corrupt[ReasonUndecodable]++
		tl.find(Corrupt, ReasonUndecodable, t, key, fmt.Sprintf("the storage codec cannot decode it (%s): %v", mediaType, err))
		return
	}
	version := gvk.GroupVersion().String()
	acc.versions[version]++
	switch writes := t.h.Route.StorageVersion; {
	case writes == "" || version == writes:
	case storedvalue.Newer(version, writes) && !t.custom:
		// A custom resource's storage version is its CRD's to choose,
		// in any order; a built-in one's moves forward with releases.
		tl.find(Versions, ReasonNewerVersion, t, key, fmt.Sprintf("stored at %s, newer than the %s this release writes: written by a newer kube-apiserver? a rewrite by this release would store it at the older version", version, writes))
	default:
		tl.find(Versions, ReasonOldVersion, t, key, fmt.Sprintf("stored at %s; the server writes %s", version, writes))
	}
	if gvk.Kind != t.h.Route.Kind {
		acc.corrupt[ReasonWrongKind]++
		tl.find(Corrupt, ReasonWrongKind, t, key, fmt.Sprintf("holds a %s %s, not a %s", gvk.GroupVersion(), gvk.Kind, t.h.Route.Kind))
		return
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		acc.corrupt[ReasonUndecodable]++
		tl.find(Corrupt, ReasonUndecodable, t, key, fmt.Sprintf("it decodes to a %T without object metadata", obj))
		return
	}
	if want, err := t.h.Key(m.GetNamespace(), m.GetName()); err != nil || want != key {
		acc.corrupt[ReasonWrongKey]++
		tl.find(Corrupt, ReasonWrongKey, t, key, fmt.Sprintf("holds %s, whose key is %s", objectName(m.GetNamespace(), m.GetName()), want))
	}
	if crd, ok := obj.(*apiextensions.CustomResourceDefinition); ok {
		tl.storedVersions[schema.GroupResource{Group: crd.Spec.Group, Resource: crd.Spec.Names.Plural}] = slices.Clone(crd.Status.StoredVersions)
	}
	if mediaType == apiruntime.ContentTypeProtobuf {
		if _, fields, err := storedvalue.ProtobufFields(data, unknownFieldsPerObject); err == nil && len(fields) > 0 {
			loss := storedvalue.Loss{Kind: version + " " + gvk.Kind, Fields: fields}
			acc.corrupt[ReasonUnknownFields]++
			tl.find(Corrupt, ReasonUnknownFields, t, key, fmt.Sprintf("protobuf fields %s does not declare (%s): %s; the next write by this release drops them", loss.Kind, loss.FieldsWhy(), joinFields(fields)))
		}
		return
	}
	if !strict && s.sections[Corrupt] {
		unknown = strictlyUnknown(s.served.of(t), data, mediaType, gvk)
	}
	if len(unknown) > 0 {
		acc.corrupt[ReasonUnknownFields]++
		tl.find(Corrupt, ReasonUnknownFields, t, key, fmt.Sprintf("fields the %s schema does not know: %s; the server prunes them when it reads the value", version+" "+gvk.Kind, joinFields(unknown)))
	}
}

func joinFields(fields []storedvalue.Field) string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Path
	}
	return strings.Join(names, ", ")
}

// strictlyUnknown decodes a JSON or CBOR value with the strict decoder of
// its path (for a custom resource, the CRD handler's, which tracks the
// fields its structural schema prunes), and returns what it objects to.
func strictlyUnknown(h *handle.Handle, data []byte, mediaType string, gvk *schema.GroupVersionKind) []storedvalue.Field {
	decoder := storedvalue.StrictDecoder(h, mediaType)
	if decoder == nil {
		return nil
	}
	_, _, err := decoder.Decode(data, gvk, h.Storage.New())
	return storedvalue.StrictFields(err, unknownFieldsPerObject)
}

// decode decodes a value as the store's codec does. A JSON or CBOR value
// of a built-in resource is decoded once, by the strict decoder of its
// path, which reads it as the storage codec does (the same scheme,
// defaulted and converted to the same internal version) and also returns
// the fields it does not know. A custom resource's value is decoded as its
// storage decodes a list's items: into an empty Unstructured, which keeps
// the version it is stored at (no conversion, so no webhook) and is
// pruned, coerced and defaulted by that version's schema; its strict
// decoder, the CRD's, converts to the version served and is run apart
// (strictlyUnknown). A value the strict decoder refuses for more than
// strictness is decoded by the storage codec, which says why. strict
// tells whether unknown is known.
func decode(h *handle.Handle, custom bool, codec apiruntime.Codec, data []byte, mediaType string) (obj apiruntime.Object, gvk *schema.GroupVersionKind, unknown []storedvalue.Field, strict bool, err error) {
	if custom {
		if obj, gvk, err = codec.Decode(data, nil, &unstructured.Unstructured{}); err != nil {
			return nil, gvk, nil, false, err
		}
		// What the storage would convert it to the version read with:
		// its converter refuses a version its CRD does not have (the
		// server reads no such value), and converts none to its own.
		if h.Codec.UnsafeConvertor != nil {
			if _, err := h.Codec.UnsafeConvertor.ConvertToVersion(obj, gvk.GroupVersion()); err != nil {
				return nil, gvk, nil, false, err
			}
		}
		return obj, gvk, nil, false, nil
	}
	if decoder := storedvalue.StrictDecoder(h, mediaType); decoder != nil {
		obj, gvk, err := decoder.Decode(data, nil, nil)
		if unknown := storedvalue.StrictFields(err, unknownFieldsPerObject); obj != nil && (err == nil || unknown != nil) {
			return obj, gvk, unknown, true, nil
		}
	}
	obj, gvk, err = codec.Decode(data, nil, nil)
	return obj, gvk, nil, false, err
}

// isRangeAllocation tells whether an unclaimed value is a service
// allocator's range (a core RangeAllocation): the server keeps those beside
// the storage map, not through a path, and reads them; they are no orphans.
func isRangeAllocation(data []byte) bool {
	obj, _, err := legacyscheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		return false
	}
	_, ok := obj.(*api.RangeAllocation)
	return ok
}

// isEndpointLease tells whether an unclaimed key is an apiserver's endpoint
// lease: a core Endpoints value written with an etcd lease. kube-apiserver
// keeps one per server beside the storage map, through storage of its own
// with a TTL (its endpoint reconciler's master leases, its peer proxy's
// peer server leases), and deletes it when it stops; they are no orphans.
// They are told by what they are, as allocator ranges are: their key
// prefixes are literals inside the server's reconciler constructors, which
// only a running server calls.
func isEndpointLease(kv *mvccpb.KeyValue) bool {
	if kv.Lease == 0 {
		return false
	}
	obj, _, err := legacyscheme.Codecs.UniversalDecoder().Decode(kv.Value, nil, nil)
	if err != nil {
		return false
	}
	_, ok := obj.(*api.Endpoints)
	return ok
}

func objectName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

func keepLargest(largest []SizedKey, k SizedKey) []SizedKey {
	if len(largest) == largestListed && !bigger(k, largest[len(largest)-1]) {
		return largest
	}
	i := sort.Search(len(largest), func(i int) bool { return bigger(k, largest[i]) })
	largest = slices.Insert(largest, i, k)
	if len(largest) > largestListed {
		largest = largest[:largestListed]
	}
	return largest
}

// bigger orders sizes largest first, then keys.
func bigger(a, b SizedKey) bool {
	return a.Bytes > b.Bytes || a.Bytes == b.Bytes && a.Key < b.Key
}

// served holds the handles built for serving of the custom resources whose
// values a scan decodes, the most recent few: keys come in order, one
// CRD's after another, so a CRD's storage is built when its first value is
// decoded and let go a few CRDs later. Memory stays flat however many CRDs
// a cluster holds, and a CRD without objects costs nothing.
type served struct {
	keep   int
	mu     sync.Mutex
	recent []*servedHandle // least recently used first
}

type servedHandle struct {
	t   *target
	get func() (*handle.Handle, error)
}

// of is t's handle, ready to decode what it stores; nil when the CRD
// handler cannot build its CRD's storage, which then serves no request on
// the server either.
func (s *served) of(t *target) *handle.Handle {
	if t.h.Serve == nil {
		return t.h
	}
	s.mu.Lock()
	i := slices.IndexFunc(s.recent, func(e *servedHandle) bool { return e.t == t })
	var e *servedHandle
	if i >= 0 {
		e = s.recent[i]
		s.recent = slices.Delete(s.recent, i, i+1)
	} else {
		e = &servedHandle{t: t, get: sync.OnceValues(t.h.Serving)}
		if len(s.recent) >= max(1, s.keep) {
			s.recent = slices.Delete(s.recent, 0, 1)
		}
	}
	s.recent = append(s.recent, e)
	s.mu.Unlock()
	h, err := e.get()
	if err != nil {
		return nil
	}
	return h
}
