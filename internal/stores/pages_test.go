package stores

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"

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
		r, _ := strconv.ParseInt(page.ResourceVersion(), 10, 64)
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
	byList := func(workers int) read {
		return func(t *testing.T, chunk int64, onFirst func()) []Page {
			var pages []Page
			err := List(ctx, s.target, ListOptions{ChunkSize: chunk, workers: workers}, func(p Page) error {
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
	}
	for _, r := range []struct {
		name   string
		read   read
		chunks []int64
	}{
		{"List", byList(0), []int64{1, 7, 500, 0, 2000}},
		{"List with 1 worker", byList(1), []int64{1, 7, 500}},
		{"List with 4 workers", byList(4), []int64{1, 7, 500}},
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
	// The readers stop once the callback fails, however many decode:
	// List returns only when they have (a test that hangs here found
	// readers waiting for ever for a page to be taken).
	for _, workers := range []int{1, 4} {
		pages := 0
		err := List(context.Background(), s.target, ListOptions{ChunkSize: 2, workers: workers}, func(Page) error {
			pages++
			return stop
		})
		if !errors.Is(err, stop) || pages != 1 {
			t.Errorf("%d workers: %v after %d pages, want the callback's error after 1", workers, err, pages)
		}
	}
}
