package scan

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	apiruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/regctl/regctl/internal/render"
)

// Sections shows the report as tables: the resources, the orphans, the
// findings, and a last line of totals.
func (r *Report) Sections(wide bool) []render.Section {
	byResource := map[string]int64{}
	for _, f := range r.Findings {
		byResource[f.Resource]++
	}
	header := []string{"RESOURCE"}
	byNamespace := slices.ContainsFunc(r.Resources, func(res Resource) bool { return res.Namespace != "" })
	if byNamespace {
		header = append(header, "NAMESPACE")
	}
	header = append(header, "KEYS", "BYTES")
	columns := []struct {
		section, title string
		cell           func(Resource) string
	}{
		{Encoding, "ENCODING", func(res Resource) string {
			return counts(res.Encoding.Counts, shortMediaType) + writes(res.Encoding.Counts, res.Encoding.Writes, shortMediaType)
		}},
		{Encryption, "ENCRYPTION", func(res Resource) string {
			return counts(res.Encryption.Counts, nil) + writes(res.Encryption.Counts, res.Encryption.Writes, nil)
		}},
		{Versions, "STORED VERSIONS", func(res Resource) string {
			return counts(res.Versions.Counts, nil) + writes(res.Versions.Counts, res.Versions.Writes, nil)
		}},
		{Corrupt, "CORRUPT", func(res Resource) string { return counts(res.Corrupt, nil) }},
	}
	// The versions' verdict is the point of a scan of versions: shown
	// beside them when they are the only values looked at, and in wide.
	if r.has(Versions) && (wide || !r.has(Encoding) && !r.has(Encryption) && !r.has(Corrupt)) {
		columns = append(columns[:3], append([]struct {
			section, title string
			cell           func(Resource) string
		}{
			{Versions, "CRD STORED VERSIONS", func(res Resource) string { return strings.Join(res.Versions.CRDStoredVersions, ",") }},
			{Versions, "VERDICT", func(res Resource) string { return res.Versions.Verdict }},
		}, columns[3:]...)...)
	}
	for _, c := range columns {
		if r.has(c.section) {
			header = append(header, c.title)
		}
	}
	if wide && r.has(Size) {
		header = append(header, "LARGEST")
	}
	var rows [][]string
	for _, res := range r.Resources {
		row := []string{res.Resource}
		if byNamespace {
			row = append(row, orNone(res.Namespace))
		}
		row = append(row, strconv.FormatInt(res.Keys, 10), strconv.FormatInt(res.Bytes, 10))
		for _, c := range columns {
			if r.has(c.section) {
				row = append(row, orNone(c.cell(res)))
			}
		}
		if wide && r.has(Size) && len(res.Largest) > 0 {
			row = append(row, fmt.Sprintf("%s (%d)", res.Largest[0].Key, res.Largest[0].Bytes))
		}
		rows = append(rows, row)
	}
	sections := []render.Section{{Header: header, Rows: rows}}

	var orphans [][]string
	for _, o := range r.Orphans {
		orphans = append(orphans, []string{o.KeyPrefix, strconv.FormatInt(o.Keys, 10), strconv.FormatInt(o.Bytes, 10)})
	}
	sections = append(sections, render.Section{Title: "Service allocator ranges (kept beside the map):", Header: []string{"KEY", "BYTES"}, Rows: sizedRows(r.Allocations)})
	if len(r.Leases) > 0 {
		sections = append(sections, render.Section{Title: "Apiserver endpoint leases (kept beside the map):", Header: []string{"KEY", "BYTES"}, Rows: sizedRows(r.Leases)})
	}
	sections = append(sections, render.Section{Title: "Keys no path of the map stores:", Header: []string{"KEY PREFIX", "KEYS", "BYTES"}, Rows: orphans})

	var findings [][]string
	for _, f := range r.Findings {
		if f.Reason == ReasonUnclaimed {
			continue // counted above
		}
		findings = append(findings, []string{f.Kind, f.Reason, f.Key, f.Detail})
	}
	sections = append(sections, render.Section{Title: "Findings:", Header: []string{"KIND", "REASON", "KEY", "DETAIL"}, Rows: findings})
	summary := [][]string{{r.summary()}}
	for _, k := range r.KeysThatDecryptNothing {
		summary = append(summary, []string{fmt.Sprintf("the encryption config's key of %s decrypts none of the %d %s encrypted with it: it is likely not the server's; pass the server's `--encryption-provider-config`", k.Key, k.Values, values(k.Values))})
	}
	for _, a := range r.Alarms {
		summary = append(summary, []string{"etcd alarm: " + a + alarmMeaning(a)})
	}
	sections = append(sections, render.Section{Rows: summary})
	return sections
}

// alarmMeaning says what an alarm of etcd does, and the way out.
func alarmMeaning(alarm string) string {
	if strings.HasPrefix(alarm, "NOSPACE ") {
		return ": etcd refuses every write but deletes until space is freed (compact its history, defragment each member, then disarm the alarm)"
	}
	return ""
}

// summary is the report's last line.
func (r *Report) summary() string {
	var found []string
	for _, k := range FindingKinds {
		if n, ok := r.FindingCounts[k]; ok {
			found = append(found, fmt.Sprintf("%d %s", n, k))
		}
	}
	line := fmt.Sprintf("%d keys, %d bytes under %s at revision %d", r.Keys, r.Bytes, r.EtcdPrefix, r.Revision)
	if len(found) > 0 {
		line += "; findings: " + strings.Join(found, ", ")
	}
	listed := int64(len(r.Findings))
	var total int64
	for _, n := range r.FindingCounts {
		total += n
	}
	if total > listed {
		line += fmt.Sprintf(" (%d listed, at most %d per resource and reason)", listed, maxListedPerResource)
	}
	return line
}

// counts shows a count map as "a=1, b=2", sorted by name.
func counts(m map[string]int64, name func(string) string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] == 0 {
			continue
		}
		n := k
		if name != nil {
			n = name(k)
		}
		parts = append(parts, fmt.Sprintf("%s=%d", n, m[k]))
	}
	return strings.Join(parts, ", ")
}

// writes names what the server writes when some value is stored otherwise.
func writes(m map[string]int64, writes string, name func(string) string) string {
	if writes == "" || len(m) == 0 || len(m) == 1 && m[writes] > 0 {
		return ""
	}
	if name != nil {
		writes = name(writes)
	}
	return " (writes " + writes + ")"
}

func shortMediaType(mediaType string) string {
	switch mediaType {
	case apiruntime.ContentTypeProtobuf:
		return "protobuf"
	case apiruntime.ContentTypeJSON:
		return "json"
	case apiruntime.ContentTypeCBOR:
		return "cbor"
	case apiruntime.ContentTypeYAML:
		return "yaml"
	}
	return mediaType
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func sizedRows(keys []SizedKey) [][]string {
	rows := make([][]string, 0, len(keys))
	for _, k := range keys {
		rows = append(rows, []string{k.Key, strconv.FormatInt(k.Bytes, 10)})
	}
	return rows
}
