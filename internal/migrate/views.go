package migrate

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/regctl/regctl/internal/render"
)

// Sections shows the report as tables: what each resource had to rewrite
// and what was done, the CRDs' stored versions, the values left as they
// were, and a last line.
func (r *Report) Sections(wide bool) []render.Section {
	header := []string{"RESOURCE", "CHOSEN", "WHY"}
	// Values kept as they are, which this release would lose part of,
	// are rare: a column of their own only when there are some.
	withKept := len(r.Kept) > 0
	if withKept {
		header = append(header, "KEPT")
	}
	if !r.DryRun {
		header = append(header, "REWRITTEN", "CURRENT", "FAILED")
	}
	var rows [][]string
	for _, res := range r.Resources {
		row := []string{res.Resource, strconv.FormatInt(res.Selected, 10), byReason(res.Reasons)}
		if withKept {
			row = append(row, strconv.FormatInt(res.Kept, 10))
		}
		if !r.DryRun {
			row = append(row, strconv.FormatInt(res.Rewritten, 10), strconv.FormatInt(res.Current, 10), strconv.FormatInt(res.Failed, 10))
		}
		rows = append(rows, row)
	}
	sections := []render.Section{{Header: header, Rows: rows}}

	var versions [][]string
	for _, v := range r.StoredVersions {
		after := strings.Join(v.After, ",")
		if v.Kept != "" {
			after = "kept: " + v.Kept
		}
		versions = append(versions, []string{v.CRD, strings.Join(v.Before, ","), after})
	}
	title := "status.storedVersions:"
	if r.DryRun {
		title = "status.storedVersions, once the objects are rewritten:"
	}
	sections = append(sections, render.Section{Title: title, Header: []string{"CUSTOMRESOURCEDEFINITION", "BEFORE", "AFTER"}, Rows: versions})

	var left [][]string
	for _, f := range r.Unreadable {
		left = append(left, []string{f.Resource, f.Key, f.Reason + ": " + f.Detail})
	}
	for _, f := range r.Kept {
		left = append(left, []string{f.Resource, f.Key, f.Reason + ": " + f.Detail})
	}
	for _, f := range r.Failed {
		left = append(left, []string{f.Resource, f.Key, f.Error})
	}
	sections = append(sections, render.Section{Title: "not rewritten:", Header: []string{"RESOURCE", "KEY", "WHY"}, Rows: left})
	sections = append(sections, render.Section{Rows: [][]string{{r.summary()}}})
	return sections
}

// summary is the report's last line.
func (r *Report) summary() string {
	var chosen, rewritten int64
	for _, res := range r.Resources {
		chosen += res.Selected
		rewritten += res.Rewritten
	}
	var line string
	switch {
	case r.DryRun:
		line = fmt.Sprintf("%d values to rewrite at revision %d (dry run: nothing written)", chosen, r.Revision)
	case r.Interrupted:
		line = fmt.Sprintf("interrupted: %d of %d values chosen at revision %d rewritten", rewritten, chosen, r.Revision)
	default:
		line = fmt.Sprintf("%d of %d values chosen at revision %d rewritten", rewritten, chosen, r.Revision)
	}
	if n := len(r.Unreadable) + len(r.Kept) + len(r.Failed); n > 0 {
		line += fmt.Sprintf("; %d not rewritten", n)
	}
	return line
}

// byReason is "old-version=2, stale-key=3000", by reason.
func byReason(counts map[string]int64) string {
	var parts []string
	for _, reason := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%s=%d", reason, counts[reason]))
	}
	return strings.Join(parts, ", ")
}
