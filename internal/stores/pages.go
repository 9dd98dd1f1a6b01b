package stores

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"sync"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/validation"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/conversion"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3"
	"k8s.io/apiserver/pkg/storage/value"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storedvalue"
)

// readList lists the target's objects as its store's List does, page by
// page: each value through the store's transformer and codec into an item
// of the store's list type, its resourceVersion set by the storage's
// versioner, kept when the store's predicate (the selectors) matches it,
// and each page through the store's decorator.
//
// What differs is how etcd is read. The store asks for the rest of the
// prefix with a limit, which etcd answers by counting every key to the end
// of the prefix: paging through n keys so costs it n²/2 pages' worth, and a
// selector that matches few objects makes one request walk most of the
// prefix. Here every page is a bounded window of the prefix at one
// revision (etcdview.PagesAt), which etcd answers counting that window
// alone, and selectors filter page by page: a list costs what it reads.
//
// Pages are decoded side by side on every core and handed to fn in key
// order, a few at a time: memory stays flat however many objects match.
func readList(ctx context.Context, t handle.Target, lo *metainternalversion.ListOptions, opts ListOptions, fn func(Page) error) error {
	store := t.Store
	pred := store.PredicateFunc(lo.LabelSelector, lo.FieldSelector)
	namespace := t.Namespace
	if ns, ok := pred.MatchesSingleNamespace(); ok && namespace == "" && len(validation.ValidateNamespaceName(ns, false)) == 0 {
		// As the store narrows a list to the namespace a field
		// selector names.
		namespace = ns
	}
	prefix, err := t.KeyPrefix(namespace)
	if err != nil {
		return err
	}
	c, err := t.Client(ctx)
	if err != nil {
		return err
	}
	rev := opts.Revision
	if rev == 0 {
		if rev, err = etcdview.Revision(ctx, c); err != nil {
			return err
		}
	}
	d, err := newItemDecoder(t, pred)
	if err != nil {
		return err
	}
	// No chunk size is one request for every key (kubectl's
	// --chunk-size=0).
	chunk := max(opts.ChunkSize, 0)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := opts.workers
	if workers <= 0 {
		workers = max(1, runtime.GOMAXPROCS(0))
	}
	order := make(chan *decodeJob, workers)
	jobs := make(chan *decodeJob)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() {
		defer close(jobs)
		defer close(order)
		err := etcdview.PagesAt(ctx, c, prefix, prefix, rev, chunk, false, func(kvs []*mvccpb.KeyValue) error {
			j := &decodeJob{kvs: kvs, done: make(chan decodedPage, 1)}
			for _, ch := range []chan *decodeJob{order, jobs} {
				select {
				case ch <- j:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		})
		if err != nil && ctx.Err() == nil {
			j := &decodeJob{done: make(chan decodedPage, 1)}
			j.done <- decodedPage{err: err}
			select {
			case order <- j:
			case <-ctx.Done():
			}
		}
	})
	for range workers {
		wg.Go(func() {
			for j := range jobs {
				j.done <- d.decodePage(ctx, j.kvs)
			}
		})
	}

	bad := 0
	pages := 0
	// decrypted counts the values read by encryption key; failing are the
	// values a key of the config did not decrypt.
	decrypted := map[string]int{}
	var failing keyFailures
	for j := range order {
		var p decodedPage
		select {
		case p = <-j.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if p.err != nil {
			return fmt.Errorf("listing %s: %w", t.Path, p.err)
		}
		for envelope, n := range p.decrypted {
			decrypted[envelope] += n
		}
		for _, b := range p.bad {
			err := explainValue(ctx, t.Handle, b.key, b.value, b.err)
			var keyErr *storedvalue.KeyError
			switch {
			case errors.As(err, &keyErr) && keyErr.Fails != nil:
				// A key of the config that does not decrypt: the config's,
				// unless it decrypts other values of the list (failing).
				failing.add(keyErr, b.key, err)
				continue
			case errors.As(err, &keyErr):
				// Every value so encrypted fails alike: said once, and
				// the list stops.
				return err
			case opts.OnError == nil:
				return fmt.Errorf("listing %s: %w", t.Path, err)
			}
			bad++
			opts.OnError(b.key, err)
		}
		if len(p.items) == 0 && pages > 0 {
			continue
		}
		page, err := d.page(p.items, rev)
		if err != nil {
			return err
		}
		pages++
		if err := fn(page); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if pages == 0 {
		page, err := d.page(nil, rev)
		if err != nil {
			return err
		}
		if err := fn(page); err != nil {
			return err
		}
	}
	keyErr, damaged := failing.verdict(decrypted)
	if keyErr != nil {
		return keyErr
	}
	for _, v := range damaged {
		if opts.OnError == nil {
			return fmt.Errorf("listing %s: %w", t.Path, v.err)
		}
		bad++
		opts.OnError(v.key, v.err)
	}
	if bad > 0 {
		return &UnreadableError{Count: bad, Path: t.Path}
	}
	return nil
}

// decodeJob is one page of values to decode, and where its result goes.
type decodeJob struct {
	kvs  []*mvccpb.KeyValue
	done chan decodedPage
}

type decodedPage struct {
	items []apiruntime.Object
	bad   []badValue
	// decrypted counts the values read, by the provider and key that
	// encrypted them (etcdview.Envelope.String).
	decrypted map[string]int
	err       error
}

// badValue is a value the store could not read.
type badValue struct {
	key   string
	value []byte
	err   error
}

// itemDecoder reads values as the store's storage reads the items of a
// list (etcd3's GetList): its transformer, then its own decoder (the
// storage's codec into a new item, and the versioner).
type itemDecoder struct {
	t           handle.Target
	transformer value.Transformer
	decoder     etcd3.Decoder
	versioner   storage.Versioner
	newItem     func() apiruntime.Object
	pred        storage.SelectionPredicate
}

func newItemDecoder(t handle.Target, pred storage.SelectionPredicate) (*itemDecoder, error) {
	codec := t.StorageCodec()
	if codec == nil {
		return nil, fmt.Errorf("regctl bug: %s has no storage codec", t.Path)
	}
	newItem, err := newItemFunc(t.Store.NewListFunc())
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", t.Path, err)
	}
	// The versioner every etcd3 storage is made with.
	versioner := storage.APIObjectVersioner{}
	return &itemDecoder{
		t:           t,
		transformer: t.Transformer(),
		decoder:     etcd3.NewDefaultDecoder(codec, versioner),
		versioner:   versioner,
		newItem:     newItem,
		pred:        pred,
	}, nil
}

// newItemFunc makes empty items of a list's type, as the storage's GetList
// does (etcd3's getNewItemFunc): for an unstructured list of a version (a
// custom resource's), an Unstructured of that version, which the storage's
// codec converts each item to; a new element otherwise.
func newItemFunc(list apiruntime.Object) (func() apiruntime.Object, error) {
	if u, ok := list.(*unstructured.UnstructuredList); ok {
		apiVersion := u.GetAPIVersion()
		if apiVersion == "" {
			return func() apiruntime.Object { return &unstructured.Unstructured{} }, nil
		}
		return func() apiruntime.Object {
			return &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion}}
		}, nil
	}
	items, err := meta.GetItemsPtr(list)
	if err != nil {
		return nil, err
	}
	v, err := conversion.EnforcePtr(items)
	if err != nil || v.Kind() != reflect.Slice {
		return nil, fmt.Errorf("%T holds no slice of items: %v", list, err)
	}
	elem := v.Type().Elem()
	if elem.Kind() == reflect.Pointer {
		elem = elem.Elem()
	}
	return func() apiruntime.Object { return reflect.New(elem).Interface().(apiruntime.Object) }, nil
}

// decodePage reads a page's values and keeps those the predicate matches.
func (d *itemDecoder) decodePage(ctx context.Context, kvs []*mvccpb.KeyValue) (out decodedPage) {
	// A panic in the server's code here would end the process with a
	// trace; it becomes the list's error instead.
	defer func() {
		if r := recover(); r != nil {
			out = decodedPage{err: fmt.Errorf("regctl bug: %v", r)}
		}
	}()
	for _, kv := range kvs {
		obj, err := d.decode(ctx, kv)
		if err != nil {
			out.bad = append(out.bad, badValue{key: string(kv.Key), value: kv.Value, err: err})
			continue
		}
		if env, ok := etcdview.ParseEnvelope(kv.Value); ok {
			if out.decrypted == nil {
				out.decrypted = map[string]int{}
			}
			out.decrypted[env.String()]++
		}
		ok, err := d.pred.Matches(obj)
		if err != nil {
			return decodedPage{err: fmt.Errorf("matching %s against the selectors: %w", kv.Key, err)}
		}
		if ok {
			out.items = append(out.items, obj)
		}
	}
	return out
}

func (d *itemDecoder) decode(ctx context.Context, kv *mvccpb.KeyValue) (apiruntime.Object, error) {
	data := kv.Value
	if d.transformer != nil {
		var err error
		if data, _, err = d.transformer.TransformFromStorage(ctx, kv.Value, value.DefaultContext(kv.Key)); err != nil {
			return nil, storage.NewInternalError(fmt.Errorf("unable to transform key %q: %w", kv.Key, err))
		}
	}
	return d.decoder.DecodeListItem(ctx, data, uint64(kv.ModRevision), d.newItem)
}

// page is a list of the store's type holding items, read at rev, through
// the store's decorator.
func (d *itemDecoder) page(items []apiruntime.Object, rev int64) (Page, error) {
	list := d.t.Store.NewListFunc()
	if err := meta.SetList(list, items); err != nil {
		return Page{}, fmt.Errorf("listing %s: %w", d.t.Path, err)
	}
	if err := d.versioner.UpdateList(list, uint64(rev), "", nil); err != nil {
		return Page{}, fmt.Errorf("listing %s: %w", d.t.Path, err)
	}
	if d.t.Store.Decorator != nil {
		d.t.Store.Decorator(list)
	}
	// The list holds copies of typed items, which the decorator saw.
	items, err := meta.ExtractList(list)
	if err != nil {
		return Page{}, fmt.Errorf("listing %s: %w", d.t.Path, err)
	}
	return Page{List: list, Items: items}, nil
}

// keyFailures are the values of a list that a key of the encryption config
// did not decrypt, by that key. The key is the config's, not the
// server's, unless it decrypted other values of the list: then those that
// failed are damaged.
type keyFailures struct {
	byKey  map[string]*storedvalue.KeyError
	values map[string][]keyFailure
}

type keyFailure struct {
	key string
	err error
}

func (f *keyFailures) add(keyErr *storedvalue.KeyError, key string, err error) {
	if f.byKey == nil {
		f.byKey, f.values = map[string]*storedvalue.KeyError{}, map[string][]keyFailure{}
	}
	envelope := keyErr.Envelope.String()
	if _, ok := f.byKey[envelope]; !ok {
		first := *keyErr
		f.byKey[envelope] = &first
	}
	f.byKey[envelope].Values++
	f.values[envelope] = append(f.values[envelope], keyFailure{key: key, err: err})
}

// verdict is, given the values each key decrypted, the error to say once
// (a key that decrypted none: the flags' doing), or else the damaged
// values, each with what its key did decrypt.
func (f *keyFailures) verdict(decrypted map[string]int) (*storedvalue.KeyError, []keyFailure) {
	var damaged []keyFailure
	for _, envelope := range slices.Sorted(maps.Keys(f.byKey)) {
		keyErr := f.byKey[envelope]
		n := decrypted[envelope]
		if n == 0 {
			return keyErr, nil
		}
		for _, v := range f.values[envelope] {
			damaged = append(damaged, keyFailure{key: v.key, err: fmt.Errorf("reading %s: cannot decrypt the value encrypted with %s, though the encryption config's key decrypts %d other %s with it: the value is damaged (%v)", v.key, envelope, n, keyErr.Resource, keyErr.Fails)})
		}
	}
	sort.Slice(damaged, func(i, j int) bool { return damaged[i].key < damaged[j].key })
	return nil, damaged
}
