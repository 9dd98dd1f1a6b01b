package restoptions

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"

	"github.com/regctl/regctl/internal/etcdview"
)

// lazyUndecorated is the decorator regctl's stores get: the server's
// UndecoratedStorage, created on first use. A server dials etcd once per
// store when it builds its map; a command that reads one path should not
// wait for twenty connections it never uses. Each call to the storage is
// bounded by the request timeout on its own (0: no bound). preflight, when
// set, checks the resource's etcd before the storage first dials it: the
// server's client would wait 20s for an endpoint that is down.
// record is told what the store passed (DecoratorCall).
func lazyUndecorated(timeout time.Duration, preflight func(context.Context) error, record func(DecoratorCall)) generic.StorageDecorator {
	return func(
		config *storagebackend.ConfigForResource,
		resourcePrefix string,
		keyFunc func(obj runtime.Object) (string, error),
		newFunc func() runtime.Object,
		newListFunc func() runtime.Object,
		getAttrsFunc storage.AttrFunc,
		trigger storage.IndexerFuncs,
		indexers *cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
		record(DecoratorCall{ResourcePrefix: resourcePrefix, KeyFunc: keyFunc, AttrFunc: getAttrsFunc, Triggers: trigger, Indexers: indexers})
		l := &lazyStorage{timeout: timeout, create: func(ctx context.Context) (storage.Interface, factory.DestroyFunc, error) {
			if preflight != nil {
				if err := preflight(ctx); err != nil {
					return nil, nil, err
				}
			}
			return generic.UndecoratedStorage(config, resourcePrefix, keyFunc, newFunc, newListFunc, getAttrsFunc, trigger, indexers)
		}}
		return l, l.destroy, nil
	}
}

// lazyStorage creates the real storage.Interface when a method first needs it.
type lazyStorage struct {
	create  func(context.Context) (storage.Interface, factory.DestroyFunc, error)
	timeout time.Duration

	once      sync.Once
	s         storage.Interface
	destroyFn factory.DestroyFunc
	err       error
	mu        sync.Mutex
	destroyed bool
}

func (l *lazyStorage) get(ctx context.Context) (storage.Interface, error) {
	l.once.Do(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.destroyed {
			l.err = storage.NewInternalError(errDestroyed)
			return
		}
		l.s, l.destroyFn, l.err = l.create(ctx)
	})
	return l.s, l.err
}

func (l *lazyStorage) destroy() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.destroyed = true
	if l.destroyFn != nil {
		l.destroyFn()
		l.destroyFn = nil
	}
}

var errDestroyed = errors.New("storage used after the map was closed")

// brokenVersioner answers when the storage could not be created; every
// operation then fails with that error anyway.
var brokenVersioner storage.Versioner = storage.APIObjectVersioner{}

func (l *lazyStorage) Versioner() storage.Versioner {
	s, err := l.get(context.Background())
	if err != nil {
		return brokenVersioner
	}
	return s.Versioner()
}

func (l *lazyStorage) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	ctx, cancel := etcdview.WithRequestTimeout(ctx, l.timeout)
	defer cancel()
	s, err := l.get(ctx)
	if err != nil {
		return err
	}
	return etcdview.RequestError(ctx, l.timeout, s.Create(ctx, key, obj, out, ttl))
}

func (l *lazyStorage) Delete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions,
	validateDeletion storage.ValidateObjectFunc, cachedExistingObject runtime.Object, opts storage.DeleteOptions) error {
	ctx, cancel := etcdview.WithRequestTimeout(ctx, l.timeout)
	defer cancel()
	s, err := l.get(ctx)
	if err != nil {
		return err
	}
	return etcdview.RequestError(ctx, l.timeout, s.Delete(ctx, key, out, preconditions, validateDeletion, cachedExistingObject, opts))
}

func (l *lazyStorage) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	// A watch lasts as long as the user wants it: no request timeout.
	s, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.Watch(ctx, key, opts)
}

func (l *lazyStorage) Get(ctx context.Context, key string, opts storage.GetOptions, objPtr runtime.Object) error {
	ctx, cancel := etcdview.WithRequestTimeout(ctx, l.timeout)
	defer cancel()
	s, err := l.get(ctx)
	if err != nil {
		return err
	}
	return etcdview.RequestError(ctx, l.timeout, s.Get(ctx, key, opts, objPtr))
}

func (l *lazyStorage) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	ctx, cancel := etcdview.WithRequestTimeout(ctx, l.timeout)
	defer cancel()
	s, err := l.get(ctx)
	if err != nil {
		return err
	}
	return etcdview.RequestError(ctx, l.timeout, s.GetList(ctx, key, opts, listObj))
}

func (l *lazyStorage) GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExistingObject runtime.Object) error {
	ctx, cancel := etcdview.WithRequestTimeout(ctx, l.timeout)
	defer cancel()
	s, err := l.get(ctx)
	if err != nil {
		return err
	}
	return etcdview.RequestError(ctx, l.timeout, s.GuaranteedUpdate(ctx, key, destination, ignoreNotFound, preconditions, tryUpdate, cachedExistingObject))
}

func (l *lazyStorage) Stats(ctx context.Context) (storage.Stats, error) {
	ctx, cancel := etcdview.WithRequestTimeout(ctx, l.timeout)
	defer cancel()
	s, err := l.get(ctx)
	if err != nil {
		return storage.Stats{}, err
	}
	out, err := s.Stats(ctx)
	return out, etcdview.RequestError(ctx, l.timeout, err)
}

func (l *lazyStorage) ReadinessCheck() error {
	s, err := l.get(context.Background())
	if err != nil {
		return err
	}
	return s.ReadinessCheck()
}

func (l *lazyStorage) RequestWatchProgress(ctx context.Context) error {
	ctx, cancel := etcdview.WithRequestTimeout(ctx, l.timeout)
	defer cancel()
	s, err := l.get(ctx)
	if err != nil {
		return err
	}
	return etcdview.RequestError(ctx, l.timeout, s.RequestWatchProgress(ctx))
}

func (l *lazyStorage) GetCurrentResourceVersion(ctx context.Context) (uint64, error) {
	ctx, cancel := etcdview.WithRequestTimeout(ctx, l.timeout)
	defer cancel()
	s, err := l.get(ctx)
	if err != nil {
		return 0, err
	}
	out, err := s.GetCurrentResourceVersion(ctx)
	return out, etcdview.RequestError(ctx, l.timeout, err)
}

func (l *lazyStorage) EnableResourceSizeEstimation(keys storage.KeysFunc) error {
	s, err := l.get(context.Background())
	if err != nil {
		return err
	}
	return s.EnableResourceSizeEstimation(keys)
}

func (l *lazyStorage) CompactRevision() int64 {
	s, err := l.get(context.Background())
	if err != nil {
		return 0
	}
	return s.CompactRevision()
}
