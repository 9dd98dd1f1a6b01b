package listwatch_test

import (
	"context"
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/storagemap/maptest"
	"github.com/regctl/regctl/internal/stores"
	"github.com/regctl/regctl/internal/stores/listwatch"
)

// TestListThenWatchMissesNothingAndShowsNothingTwice: what is listed is
// not reported again by the watch, and a change made once the list is read
// is reported.
func TestListThenWatchMissesNothingAndShowsNothingTwice(t *testing.T) {
	target, create := maptest.ConfigMaps(t, "default")
	create("a")
	create("b")
	// A watch that missed c would wait for it until the deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var listed, events []string
	stop := errors.New("seen")
	err := listwatch.ListThenWatch(ctx, target, listwatch.ListThenWatchOptions{},
		func(page stores.Page) error {
			for _, item := range page.Items {
				listed = append(listed, item.(*api.ConfigMap).Name)
			}
			return nil
		},
		func() error {
			create("c") // after the list, before the watch starts
			return nil
		},
		func(ev watch.Event) error {
			events = append(events, string(ev.Type)+" "+ev.Object.(*api.ConfigMap).Name)
			return stop
		})
	if !errors.Is(err, stop) {
		t.Fatalf("ListThenWatch: %v", err)
	}
	if len(listed) != 2 || listed[0] != "a" || listed[1] != "b" {
		t.Errorf("listed %v, want a and b", listed)
	}
	if len(events) != 1 || events[0] != "ADDED c" {
		t.Errorf("events %v, want c added once", events)
	}
}

func TestListThenWatchOfAMissingObjectIsNotFound(t *testing.T) {
	target, create := maptest.ConfigMaps(t, "default")
	create("a")
	err := listwatch.ListThenWatch(context.Background(), target, listwatch.ListThenWatchOptions{Name: "nope"},
		func(stores.Page) error { return nil }, func() error { return nil },
		func(watch.Event) error { return errors.New("no event expected") })
	if !apierrors.IsNotFound(err) {
		t.Errorf("err %v, want NotFound", err)
	}
}
