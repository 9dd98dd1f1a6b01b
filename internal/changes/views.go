package changes

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/regctl/regctl/internal/render"
)

// Formats are the output formats of a comparison.
var Formats = []render.Format{render.Table, render.YAML, render.JSON}

// Sections shows the report as a table per resource, then the objects
// that differ with their changed fields and writers, then a last line.
func (r *Report) Sections(wide bool) []render.Section {
	var counts [][]string
	for _, res := range r.Resources {
		if res.Added+res.Removed+res.Changed+res.Recreated == 0 && res.Storage == "" && res.Skipped == "" {
			continue
		}
		n := func(v int64) string { return strconv.FormatInt(v, 10) }
		note := res.Storage
		if res.Skipped != "" {
			note = "not compared: " + res.Skipped
		}
		counts = append(counts, []string{res.Resource, n(res.Added), n(res.Removed), n(res.Changed), n(res.Recreated), n(res.Unchanged), orNone(note)})
	}
	var objects [][]string
	for _, o := range r.Objects {
		var fields []string
		for _, f := range o.Fields {
			by := ""
			if f.Manager != "" {
				by = " (" + f.Manager + ")"
			}
			fields = append(fields, f.Path+by)
		}
		objects = append(objects, []string{o.Resource, orNone(o.Namespace), o.Name, o.Change, orNone(strings.Join(fields, ", "))})
	}
	var unreadable [][]string
	for _, u := range r.Unreadable {
		unreadable = append(unreadable, []string{u.Side, u.Key, u.Error})
	}
	return []render.Section{
		{Header: []string{"RESOURCE", "ADDED", "REMOVED", "CHANGED", "RECREATED", "UNCHANGED", "STORAGE"}, Rows: counts},
		{Header: []string{"RESOURCE", "NAMESPACE", "NAME", "CHANGE", "FIELDS (MANAGER)"}, Rows: objects},
		{Title: "unreadable:", Header: []string{"SIDE", "KEY", "ERROR"}, Rows: unreadable},
		{Rows: [][]string{{r.summary()}}},
	}
}

func (r *Report) summary() string {
	var differ, same int64
	for _, res := range r.Resources {
		differ += res.Added + res.Removed + res.Changed + res.Recreated
		same += res.Unchanged
	}
	line := fmt.Sprintf("%d %s and %d %s the same between %s and %s", differ, render.Plural(int(differ), "object differs", "objects differ"),
		same, render.Plural(int(same), "is", "are"), sideName(r.From), sideName(r.To))
	if n := len(r.Unreadable); n > 0 {
		line += fmt.Sprintf("; %d could not be read", n)
	}
	return line
}

// unreadableList names the keys that could not be read, the first few.
func (r *Report) unreadableList() string {
	const named = 3
	var keys []string
	for _, u := range r.Unreadable[:min(len(r.Unreadable), named)] {
		keys = append(keys, u.Key)
	}
	if len(r.Unreadable) > named {
		keys = append(keys, fmt.Sprintf("and %d more (see the report)", len(r.Unreadable)-named))
	}
	return strings.Join(keys, ", ")
}

func sideName(s Side) string {
	if s.Revision > 0 && !strings.HasPrefix(s.Name, "rev:") {
		return fmt.Sprintf("%s (revision %d)", s.Name, s.Revision)
	}
	return s.Name
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
