package stores

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"

	"github.com/regctl/regctl/internal/etcdview"
)

// readPages starts reading the pages of a list into a channel, in order,
// and returns it with a function that waits for the readers to stop once
// ctx is done.
//
// A list with no selector is read side by side when there are cores to do
// it: decoding is most of a page's cost, and the store decodes one page at
// a time. The keys under the store's prefix are walked (keys only) at one
// revision and cut into pages of lo.Limit keys; each page is then the
// store's own List from a continue token at its first key, limited to its
// length, so it holds exactly the objects a paged list would, read at that
// revision. A list with a selector is read page after page, since the
// store fills each page past keys it filters out and a page's end cannot
// be known beforehand.
func readPages(ctx context.Context, t Target, lister rest.Lister, lo metainternalversion.ListOptions, rev int64) (<-chan fetched, func()) {
	out := make(chan fetched)
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	if workers < 2 || lo.Limit <= 0 || t.Store == nil || !lo.LabelSelector.Empty() || !lo.FieldSelector.Empty() {
		wg.Go(func() { fetch(ctx, lister, lo, out) })
		return out, wg.Wait
	}
	wg.Go(func() { readSideBySide(ctx, t, lister, lo, rev, workers, out) })
	return out, wg.Wait
}

// pageJob is one page read side by side: where it starts, how many objects
// it holds, and where its result goes.
type pageJob struct {
	first  string
	length int64
	done   chan fetched
}

func readSideBySide(ctx context.Context, t Target, lister rest.Lister, lo metainternalversion.ListOptions, rev int64, workers int, out chan<- fetched) {
	c, err := t.Client(ctx)
	var prefix string
	if err == nil {
		prefix, err = t.KeyPrefix(t.Namespace)
	}
	var count int64
	if err == nil {
		count, rev, err = etcdview.CountAt(ctx, c, prefix, rev)
	}
	if err != nil || count <= lo.Limit {
		// One page (or none) has nothing to share out. When the keys
		// cannot be counted, the store's own List says why.
		fetch(ctx, lister, lo, out)
		return
	}
	defer close(out)

	// Each page is shared out among the workers, and the shares are handed
	// on in order, at most workers of them waiting: about two pages are
	// held at a time, as when they are read one after the other.
	share := (lo.Limit + int64(workers) - 1) / int64(workers)
	var wg sync.WaitGroup
	defer wg.Wait()
	order := make(chan *pageJob, workers)
	jobs := make(chan *pageJob)
	wg.Go(func() {
		defer close(jobs)
		defer close(order)
		err := etcdview.Runs(ctx, c, prefix, rev, share, func(first string, length int64) error {
			j := &pageJob{first: first, length: length, done: make(chan fetched, 1)}
			for _, ch := range []chan *pageJob{order, jobs} {
				select {
				case ch <- j:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		})
		if err != nil && ctx.Err() == nil {
			j := &pageJob{done: make(chan fetched, 1)}
			j.done <- fetched{err: err}
			select {
			case order <- j:
			case <-ctx.Done():
			}
		}
	})
	for range workers {
		wg.Go(func() {
			for j := range jobs {
				j.done <- readPage(ctx, lister, lo, prefix, rev, j)
			}
		})
	}
	for j := range order {
		var f fetched
		select {
		case f = <-j.done:
		case <-ctx.Done():
			return
		}
		select {
		case out <- f:
		case <-ctx.Done():
			return
		}
		if f.err != nil {
			return
		}
	}
}

// readPage lists one page through the store, from a continue token at its
// first key.
func readPage(ctx context.Context, lister rest.Lister, lo metainternalversion.ListOptions, prefix string, rev int64, j *pageJob) (f fetched) {
	defer func() {
		if r := recover(); r != nil {
			f = fetched{err: fmt.Errorf("regctl bug: %v", r)}
		}
	}()
	token, err := storage.EncodeContinue(j.first, prefix, rev)
	if err != nil {
		return fetched{err: err, rev: rev}
	}
	lo.Continue, lo.Limit = token, j.length
	lo.ResourceVersion, lo.ResourceVersionMatch = "", ""
	list, err := lister.List(ctx, &lo)
	if err != nil {
		return fetched{err: err, rev: rev}
	}
	f.page.List = list
	f.page.Items, f.err = meta.ExtractList(list)
	return f
}
