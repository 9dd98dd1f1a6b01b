package inspect

import (
	"reflect"
	"testing"
	"time"

	"github.com/regctl/regctl/internal/stores/history"
)

// TestParse checks inspect's arguments and flags without an etcd.
func TestParse(t *testing.T) {
	for _, c := range []struct {
		args []string
		o    Options
		want string
	}{
		{[]string{"pods/web"}, Options{}, ""},
		{[]string{"pods", "web"}, Options{History: true}, ""},
		{[]string{"configmaps/a"}, Options{Revision: 7}, ""},
		{[]string{"pods"}, Options{}, "name exactly one object, e.g. `pods/web`"},
		{[]string{"pods", "a", "b"}, Options{}, "name exactly one object, e.g. `pods/web`"},
		{[]string{"pods/web"}, Options{History: true, Revision: 3}, "`--history` lists every revision held: drop `--revision`"},
	} {
		ref, err := Parse(c.args, c.o)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.args, err)
		case c.want != "" && (err == nil || err.Error() != c.want):
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		case c.want == "" && len(ref.Names) != 1:
			t.Errorf("%v: names %v, want one", c.args, ref.Names)
		}
	}
}

func TestHistoryTable(t *testing.T) {
	created := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	renewed := created.Add(8250 * time.Millisecond)
	rows := historyTable{
		{Order: 1, Revision: 5, Event: history.EventCreated, ValueSize: 100, Time: &history.When{At: &created, Clock: "metadata.creationTimestamp"}},
		{Order: 2, Revision: 6, Event: history.EventUpdated, ValueSize: 120, Changed: []string{"data.a", "data.b"}, Time: &history.When{After: &created, Before: &renewed}},
		{Order: 3, Revision: 7, Event: history.EventUpdated, ValueSize: 120},
		{Order: 4, Revision: 8, Event: history.EventUpdated, ValueSize: 9, Problem: "undecodable"},
		{Order: 5, Revision: 9, Event: history.EventDeleted},
	}.Rows(false)
	want := [][]string{
		{"1", "5", history.EventCreated, "2026-11-29T14:00:00Z", "100", "<none>"},
		{"2", "6", history.EventUpdated, "between 2026-11-29T14:00:00Z and 14:00:08.25Z", "120", "data.a, data.b"},
		{"3", "7", history.EventUpdated, "<unknown>", "120", "<only metadata.resourceVersion or managedFields>"},
		{"4", "8", history.EventUpdated, "<unknown>", "9", "<unreadable: undecodable>"},
		{"5", "9", history.EventDeleted, "<unknown>", "0", "<none>"},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows %q, want %q", rows, want)
	}
}
