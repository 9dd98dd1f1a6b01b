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

// collected is what a list handed on and reported.
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

// TestAListWithUnreadableValuesReportsThemAndListsTheRest: a page holds a
// value the store cannot read; the list reports its key and goes on at
// the same revision, so every readable object is listed once, in order, a
// config map created once the list has started is not, and each
// unreadable key is reported.
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

// TestListsAtARevisionReportUnreadableValues: lists at a revision (an
// object created since is not listed), paged or not, filtered by a name
// or not, hand on every readable object once in key order, in pages of at
// most their chunk size, and report each unreadable key they reach.
func TestListsAtARevisionReportUnreadableValues(t *testing.T) {
	s, bad := configMapsWithGarbage(t)
	rev := s.create(t, "cm-00a") // the revision before cm-05a
	s.create(t, "cm-05a")
	atRev := []string{"cm-00", "cm-00a", "cm-01", "cm-02", "cm-03", "cm-04", "cm-05", "cm-06", "cm-07", "cm-08", "cm-09"}
	for _, tc := range []struct {
		name     string
		opts     ListOptions
		want     []string
		wantPage int
		bad      []string
	}{
		{"everything now", ListOptions{ChunkSize: 3}, []string{"cm-00", "cm-00a", "cm-01", "cm-02", "cm-03", "cm-04", "cm-05", "cm-05a", "cm-06", "cm-07", "cm-08", "cm-09"}, 3, bad},
		{"at the revision before cm-05a", ListOptions{ChunkSize: 3, Revision: rev}, atRev, 3, bad},
		{"unpaged, at that revision", ListOptions{Revision: rev}, atRev, len(atRev), bad},
		{"by name", ListOptions{ChunkSize: 3, FieldSelector: "metadata.name=cm-07", Revision: rev}, []string{"cm-07"}, 1, nil},
		{"by the name of an unreadable value", ListOptions{ChunkSize: 3, FieldSelector: "metadata.name=cm-04-bad"}, nil, 0, bad[:1]},
		{"by a name that matches none", ListOptions{ChunkSize: 3, FieldSelector: "metadata.name!=cm-07"}, slices.DeleteFunc(slices.Clone(atRev), func(n string) bool { return n == "cm-07" }), 3, bad},
	} {
		opts := tc.opts
		var c collected
		opts.OnError = c.onError(t)
		err := List(context.Background(), s.target, opts, c.page)
		if len(tc.bad) > 0 {
			wantUnreadable(t, err, len(tc.bad))
		} else if err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if tc.name == "by a name that matches none" {
			// Listed now: cm-05a is there.
			tc.want = append(tc.want, "cm-05a")
			slices.Sort(tc.want)
		}
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
}
