package stores

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// configMapsWithGarbage is a real store of config maps cm-00 to cm-09,
// with two values the store cannot read put straight into etcd among them
// (cm-04-bad) and after them (cm-09-bad). It returns their keys.
func configMapsWithGarbage(t *testing.T) (realConfigMaps, []string) {
	t.Helper()
	s := newRealConfigMaps(t)
	var good []string
	for i := range 10 {
		good = append(good, fmt.Sprintf("cm-%02d", i))
	}
	s.create(t, good...)
	bad := []string{s.key(t, "cm-04-bad"), s.key(t, "cm-09-bad")}
	for _, key := range bad {
		if _, err := s.etcd.Put(context.Background(), key, "\x00\x01 not an object"); err != nil {
			t.Fatal(err)
		}
	}
	return s, bad
}

// collected is what a list by key handed on and reported.
type collected struct {
	names []string
	bad   []string
	pages int
	// big is the largest page.
	big int
}

func (c *collected) page(p Page) error {
	c.pages++
	c.big = max(c.big, len(p.Items))
	c.names = append(c.names, names(p.Items)...)
	return nil
}

func (c *collected) onError(t *testing.T) func(string, error) {
	return func(key string, err error) {
		// The error names the key and says why it cannot be read.
		if !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "cannot decode the stored value") {
			t.Errorf("%s reported with %q", key, err)
		}
		c.bad = append(c.bad, key)
	}
}

func wantUnreadable(t *testing.T, err error, n int) {
	t.Helper()
	var u *UnreadableError
	if !errors.As(err, &u) || u.Count != n || u.Path != "configmaps" || !WalkedToEnd(err) {
		t.Errorf("err %v, want %d configmaps unreadable", err, n)
	}
}

// TestAListWithUnreadableValuesReportsThemAndListsTheRest: a page of the
// store's list fails on a value it cannot read; List goes on key by key
// from the last object listed, at the revision of the pages before, so
// every readable object is listed once, in order, a config map created
// once the list has started (after the first unreadable value) is not,
// and each unreadable key is reported.
func TestAListWithUnreadableValuesReportsThemAndListsTheRest(t *testing.T) {
	s, bad := configMapsWithGarbage(t)
	want := []string{"cm-00", "cm-01", "cm-02", "cm-03", "cm-04", "cm-05", "cm-06", "cm-07", "cm-08", "cm-09"}
	for _, chunk := range []int64{0, 1, 3, 500} {
		var c collected
		late := fmt.Sprintf("cm-07-%d", chunk)
		err := List(context.Background(), s.target, ListOptions{ChunkSize: chunk, OnError: c.onError(t)}, func(p Page) error {
			if c.pages == 0 {
				s.create(t, late)
			}
			return c.page(p)
		})
		wantUnreadable(t, err, 2)
		if !slices.Equal(c.names, want) {
			t.Errorf("pages of %d: listed %q, want %q", chunk, c.names, want)
		}
		if !slices.Equal(c.bad, bad) {
			t.Errorf("pages of %d: reported %q, want %q", chunk, c.bad, bad)
		}
		// The next list shows it.
		want = append(want, late)
		slices.Sort(want)
	}
}

// TestListByKeyResumesAfterAKeyAtTheRevisionGiven: listByKey lists what
// comes after the key it is given, as it was at the revision given (an
// object created since is not listed), in pages of the list's limit,
// filtered by its selectors, and reports each unreadable key.
func TestListByKeyResumesAfterAKeyAtTheRevisionGiven(t *testing.T) {
	s, bad := configMapsWithGarbage(t)
	rev := s.create(t, "cm-00a") // the revision before cm-05a
	s.create(t, "cm-05a")
	ctx := RequestContext(context.Background(), s.target)
	for _, tc := range []struct {
		name     string
		opts     ListOptions
		after    string
		rev      int64
		want     []string
		wantPage int
		// bad are the unreadable keys after the start.
		bad []string
	}{
		{"everything now", ListOptions{ChunkSize: 3}, "", 0, []string{"cm-00", "cm-00a", "cm-01", "cm-02", "cm-03", "cm-04", "cm-05", "cm-05a", "cm-06", "cm-07", "cm-08", "cm-09"}, 3, bad},
		{"after cm-02, at the revision before cm-05a", ListOptions{ChunkSize: 3}, s.key(t, "cm-02"), rev, []string{"cm-03", "cm-04", "cm-05", "cm-06", "cm-07", "cm-08", "cm-09"}, 3, bad},
		{"after cm-02, now", ListOptions{ChunkSize: 3}, s.key(t, "cm-02"), 0, []string{"cm-03", "cm-04", "cm-05", "cm-05a", "cm-06", "cm-07", "cm-08", "cm-09"}, 3, bad},
		{"after a key that is not there", ListOptions{ChunkSize: 3}, s.key(t, "cm-065"), rev, []string{"cm-07", "cm-08", "cm-09"}, 3, bad[1:]},
		{"unpaged, one key at a time", ListOptions{}, s.key(t, "cm-06"), rev, []string{"cm-07", "cm-08", "cm-09"}, 1, bad[1:]},
		{"by name", ListOptions{ChunkSize: 3, FieldSelector: "metadata.name=cm-07"}, "", rev, []string{"cm-07"}, 1, bad},
	} {
		lo, err := listOptions(s.target, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		var c collected
		err = listByKey(ctx, s.target, lo, tc.after, tc.rev, c.onError(t), c.page)
		wantUnreadable(t, err, len(tc.bad))
		if !slices.Equal(c.names, tc.want) {
			t.Errorf("%s: listed %q, want %q", tc.name, c.names, tc.want)
		}
		if !slices.Equal(c.bad, tc.bad) {
			t.Errorf("%s: reported %q, want %q", tc.name, c.bad, tc.bad)
		}
		if c.big > tc.wantPage {
			t.Errorf("%s: a page of %d objects, want at most %d", tc.name, c.big, tc.wantPage)
		}
	}
	// Past the last unreadable key, nothing is reported and the list
	// ends without error.
	lo, err := listOptions(s.target, ListOptions{ChunkSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	var c collected
	if err := listByKey(ctx, s.target, lo, bad[1], 0, c.onError(t), c.page); err != nil || len(c.names) != 0 || len(c.bad) != 0 {
		t.Errorf("after the last key: %q, %q, %v, want nothing", c.names, c.bad, err)
	}
}
