package stores

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/regctl/regctl/internal/etcdview"
)

// listedAtOneRevision checks pages read while the config maps extra were
// created (after the first page): every page is at one revision, before
// any of extra, and the pages hold the config maps want, each once, in
// key order.
func listedAtOneRevision(t *testing.T, pages []Page, want []string, before int64, extraFrom int64) {
	t.Helper()
	var got []string
	var rev int64
	for i, page := range pages {
		r := listRevision(page.List)
		if i == 0 {
			rev = r
		}
		if r != rev {
			t.Errorf("page %d read at revision %d, the first at %d", i, r, rev)
		}
		got = append(got, names(page.Items)...)
	}
	if rev < before || rev >= extraFrom {
		t.Errorf("read at revision %d, want one from %d, before the objects created meanwhile (%d on)", rev, before, extraFrom)
	}
	if !slices.Equal(got, want) {
		t.Errorf("listed %d config maps, want %d; first difference: %s", len(got), len(want), firstDifference(got, want))
	}
}

func firstDifference(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("at %d, %s, want %s", i, got[i], want[i])
		}
	}
	if len(got) > len(want) {
		return fmt.Sprintf("%s too many", got[len(want)])
	}
	return fmt.Sprintf("%s missing", want[len(got)])
}

// TestListsReadEveryObjectOnceInKeyOrderAtOneRevision: 1,234 config maps
// listed on a real store in pages of 1, 7, 500 and all at once, by List
// and side by side with 1 and 4 workers, come out each once, in key order,
// every page at the revision the list started at, though config maps are
// created in the middle and at the end of the range while it is read.
func TestListsReadEveryObjectOnceInKeyOrderAtOneRevision(t *testing.T) {
	s := newRealConfigMaps(t)
	var want []string
	for i := range 1234 {
		want = append(want, fmt.Sprintf("cm-%04d", i))
	}
	s.create(t, want...)
	ctx := context.Background()

	// create creates config maps in the middle and at the end of the
	// range; it returns their names and the revision they start at.
	round := 0
	create := func(t *testing.T) ([]string, int64) {
		round++
		extra := []string{fmt.Sprintf("cm-0617-%d", round), fmt.Sprintf("zz-%d", round)}
		rev, err := etcdview.Revision(ctx, s.etcd)
		if err != nil {
			t.Fatal(err)
		}
		s.create(t, extra...)
		return extra, rev + 1
	}

	type read func(t *testing.T, chunk int64, onFirst func()) []Page
	byList := func(t *testing.T, chunk int64, onFirst func()) []Page {
		var pages []Page
		err := List(ctx, s.target, ListOptions{ChunkSize: chunk}, func(p Page) error {
			if len(pages) == 0 {
				onFirst()
			}
			pages = append(pages, p)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return pages
	}
	sideBySide := func(workers int) read {
		return func(t *testing.T, chunk int64, onFirst func()) []Page {
			lo, err := listOptions(s.target, ListOptions{ChunkSize: chunk})
			if err != nil {
				t.Fatal(err)
			}
			// A test that fails midway stops the readers.
			ctx, cancel := context.WithCancel(RequestContext(ctx, s.target))
			defer cancel()
			out := make(chan fetched)
			go readSideBySide(ctx, s.target, s.target.Storage.(rest.Lister), *lo, 0, workers, out)
			var pages []Page
			for f := range out {
				if f.err != nil {
					t.Fatal(f.err)
				}
				if len(pages) == 0 {
					onFirst()
				}
				pages = append(pages, f.page)
			}
			return pages
		}
	}
	for _, r := range []struct {
		name   string
		read   read
		chunks []int64
	}{
		{"List", byList, []int64{1, 7, 500, 0}},
		// readPages reads side by side only pages of a limited size; a
		// list of one page (2000) is read as a list of pages is.
		{"side by side with 1 worker", sideBySide(1), []int64{1, 7, 500, 2000}},
		{"side by side with 4 workers", sideBySide(4), []int64{1, 7, 500, 2000}},
	} {
		for _, chunk := range r.chunks {
			t.Run(fmt.Sprintf("%s in pages of %d", r.name, chunk), func(t *testing.T) {
				before, err := etcdview.Revision(ctx, s.etcd)
				if err != nil {
					t.Fatal(err)
				}
				// Config maps are created once the first page is read,
				// while the next are read; the list must not show them,
				// and later lists must.
				var extraFrom int64
				var extra []string
				pages := r.read(t, chunk, func() { extra, extraFrom = create(t) })
				if chunk > 0 && len(pages) < 1234/int(chunk) {
					t.Errorf("%d pages of %d", len(pages), chunk)
				}
				listedAtOneRevision(t, pages, want, before, extraFrom)
				want = append(want, extra...)
				slices.Sort(want)
			})
		}
	}
}

// TestAListStoppedByItsCallerStopsItsReaders: a list whose callback fails
// on the first page returns that error, and its readers, side by side
// with 1 or 4 workers, stop once cancelled instead of reading on or
// waiting for ever for a page to be taken.
func TestAListStoppedByItsCallerStopsItsReaders(t *testing.T) {
	s := newRealConfigMaps(t)
	var all []string
	for i := range 100 {
		all = append(all, fmt.Sprintf("cm-%03d", i))
	}
	s.create(t, all...)
	stop := errors.New("stop")
	pages := 0
	err := List(context.Background(), s.target, ListOptions{ChunkSize: 2}, func(Page) error {
		pages++
		return stop
	})
	if !errors.Is(err, stop) || pages != 1 {
		t.Errorf("List: %v after %d pages, want the callback's error after 1", err, pages)
	}
	for _, workers := range []int{1, 4} {
		lo, err := listOptions(s.target, ListOptions{ChunkSize: 2})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(RequestContext(context.Background(), s.target))
		out := make(chan fetched)
		done := make(chan struct{})
		go func() {
			defer close(done)
			readSideBySide(ctx, s.target, s.target.Storage.(rest.Lister), *lo, 0, workers, out)
		}()
		if f := <-out; f.err != nil || len(f.page.Items) == 0 {
			t.Fatalf("%d workers, first page: %v, %v", workers, f.page.Items, f.err)
		}
		// The caller takes no more pages and cancels, as List does when
		// its callback fails: the readers must return (a test that hangs
		// here found readers waiting for ever).
		cancel()
		<-done
	}
}
