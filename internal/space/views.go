package space

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/regctl/regctl/internal/render"
)

// Sections shows the report as tables, sizes in binary units: etcd's own
// figures (its members', or the snapshot file's), the alarms, the
// history, the resources, the namespaces, the largest objects and the
// keys with the most revisions, then what to free first.
func (r *Report) Sections(bool) []render.Section {
	var sections []render.Section
	if r.Snapshot != nil {
		s := r.Snapshot
		sections = append(sections, render.Section{
			Title:  "Snapshot (the file's own figures: a member restored from it starts with this database):",
			Header: []string{"FILE", "FILE SIZE", "DB SIZE", "IN USE", "FREE", "REVISION", "COMPACTED"},
			Rows: [][]string{{s.Path, render.Bytes(s.FileSize), render.Bytes(s.DBSize), render.Bytes(s.DBSizeInUse), render.Bytes(s.DBSize - s.DBSizeInUse),
				itoa(s.Revision), itoa(s.Compacted)}},
		})
	}
	sections = append(sections, r.members(), r.alarms(), r.history(), r.resources(), r.namespaces(), r.largest(), r.hotKeys(), r.summary())
	return sections
}

func (r *Report) members() render.Section {
	s := render.Section{Header: []string{"ENDPOINT", "ID", "VERSION", "DB SIZE", "IN USE", "FREE", "QUOTA", "LEADER", "RAFT INDEX", "REVISION"}}
	for _, m := range r.Members {
		if m.Error != "" {
			s.Rows = append(s.Rows, []string{m.Endpoint, "-", "-", "-", "-", "-", "-", "-", "-", "error: " + m.Error})
			continue
		}
		quota := "-"
		if m.Quota > 0 {
			quota = fmt.Sprintf("%s (%s full)", render.Bytes(m.Quota), render.Percent(m.DBSize, m.Quota))
		}
		s.Rows = append(s.Rows, []string{m.Endpoint, m.ID, m.Version, render.Bytes(m.DBSize), render.Bytes(m.DBSizeInUse), render.Bytes(m.DBSize - m.DBSizeInUse),
			quota, strconv.FormatBool(m.Leader), strconv.FormatUint(m.RaftIndex, 10), itoa(m.Revision)})
	}
	return s
}

func (r *Report) alarms() render.Section {
	endpoints := map[string][]string{}
	for _, m := range r.Members {
		if m.ID != "" {
			endpoints[m.ID] = append(endpoints[m.ID], m.Endpoint)
		}
	}
	s := render.Section{Title: "Alarms:", Header: []string{"MEMBER", "ENDPOINT", "ALARM"}}
	for _, a := range r.Alarms {
		s.Rows = append(s.Rows, []string{a.Member, orNone(strings.Join(endpoints[a.Member], ",")), a.Alarm})
	}
	return s
}

// overridden tells whether some resource is on other servers than the
// rest, which then get a column.
func (r *Report) overridden() bool { return len(r.History) > 1 }

func (r *Report) history() render.Section {
	s := render.Section{Title: "History (compacting to the current revision removes the old revisions):"}
	s.Header = []string{"REVISION", "COMPACTED", "REVISIONS SINCE", "OLD REVISIONS", "OLD BYTES"}
	if r.overridden() {
		s.Header = append([]string{"ETCD"}, s.Header...)
	}
	for _, h := range r.History {
		old, oldBytes := "not read", "not read"
		if h.Read {
			old, oldBytes = itoa(h.OldRevisions), render.Bytes(h.OldBytes)
		}
		row := []string{itoa(h.Revision), itoa(h.Compacted), itoa(h.Revision - h.Compacted), old, oldBytes}
		if r.overridden() {
			row = append([]string{etcdName(h.EtcdServers)}, row...)
		}
		s.Rows = append(s.Rows, row)
	}
	return s
}

// unread are the etcds, by name, whose history was not read.
func (r *Report) unread() map[string]bool {
	out := map[string]bool{}
	for _, h := range r.History {
		if !h.Read {
			out[etcdName(h.EtcdServers)] = true
		}
	}
	return out
}

func (r *Report) resources() render.Section {
	s := render.Section{Title: "Resources:", Header: []string{"RESOURCE", "KEY PREFIX", "KEYS", "BYTES", "OLD REVISIONS", "OLD BYTES"}}
	if r.overridden() {
		s.Header = append(s.Header, "ETCD")
	}
	unread := r.unread()
	for _, res := range r.Resources {
		old, oldBytes := itoa(res.OldRevisions), render.Bytes(res.OldBytes)
		if unread[etcdName(res.EtcdServers)] {
			old, oldBytes = "-", "-"
		}
		row := []string{orNone(res.Resource), res.KeyPrefix, itoa(res.Keys), render.Bytes(res.Bytes), old, oldBytes}
		if r.overridden() {
			row = append(row, etcdName(res.EtcdServers))
		}
		s.Rows = append(s.Rows, row)
	}
	return s
}

func (r *Report) namespaces() render.Section {
	s := render.Section{Title: "Namespaces:", Header: []string{"NAMESPACE", "KEYS", "BYTES", "MOST BYTES"}}
	for _, ns := range r.Namespaces {
		most := "-"
		if len(ns.Resources) > 0 {
			most = fmt.Sprintf("%s (%s)", ns.Resources[0].Resource, render.Bytes(ns.Resources[0].Bytes))
		}
		s.Rows = append(s.Rows, []string{ns.Namespace, itoa(ns.Keys), render.Bytes(ns.Bytes), most})
	}
	return s
}

func (r *Report) largest() render.Section {
	s := render.Section{Title: "Largest objects:", Header: []string{"KEY", "RESOURCE", "BYTES"}}
	for _, o := range r.Largest {
		s.Rows = append(s.Rows, []string{o.Key, orNone(o.Resource), render.Bytes(o.Bytes)})
	}
	return s
}

func (r *Report) hotKeys() render.Section {
	s := render.Section{Title: "Keys with the most revisions held:", Header: []string{"KEY", "RESOURCE", "REVISIONS", "OLD BYTES"}}
	for _, k := range r.HotKeys {
		revisions := itoa(k.Revisions)
		if k.Deleted {
			revisions += " (deleted)"
		}
		s.Rows = append(s.Rows, []string{k.Key, orNone(k.Resource), revisions, render.Bytes(k.OldBytes)})
	}
	return s
}

// summary is the report's last lines: the totals, and what would free
// space, first what frees the most.
func (r *Report) summary() render.Section {
	root := strings.TrimSuffix(r.EtcdPrefix, "/") + "/"
	lines := [][]string{{fmt.Sprintf("%d keys under %s hold %s of values at revision %d.", r.Keys, root, render.Bytes(r.Bytes), r.Revision)}}
	for _, h := range r.History {
		on := ""
		if r.overridden() {
			on = " on " + etcdName(h.EtcdServers)
		}
		if !h.Read {
			lines = append(lines, []string{fmt.Sprintf("Compacting%s to revision %d removes every revision of the %d since revision %d but each key's last value; they were not read (`--max-history`).",
				on, h.Revision, h.Revision-h.Compacted, h.Compacted)})
			continue
		}
		if h.OldRevisions == 0 {
			continue
		}
		outside := ""
		if h.OutsideRevisions > 0 {
			outside = fmt.Sprintf(" (%d of them, %s, of keys outside %s)", h.OutsideRevisions, render.Bytes(h.OutsideBytes), root)
		}
		lines = append(lines, []string{fmt.Sprintf("Compacting%s to revision %d removes %d old revisions holding %s of values%s; defragmenting each member then gives their pages back to the filesystem.",
			on, h.Revision, h.OldRevisions, render.Bytes(h.OldBytes), outside)})
	}
	for _, m := range r.Members {
		if m.Error == "" && m.DBSize > m.DBSizeInUse {
			lines = append(lines, []string{fmt.Sprintf("Defragmenting %s gives %s of free pages back to the filesystem now.", m.Endpoint, render.Bytes(m.DBSize-m.DBSizeInUse))})
		}
	}
	if s := r.Snapshot; s != nil && s.DBSize > s.DBSizeInUse {
		lines = append(lines, []string{fmt.Sprintf("A member restored from the snapshot holds %s of free pages until it is defragmented.", render.Bytes(s.DBSize-s.DBSizeInUse))})
	}
	for _, a := range r.Alarms {
		if a.Alarm == "NOSPACE" {
			lines = append(lines, []string{fmt.Sprintf("etcd alarm: NOSPACE on member %s: etcd refuses every write but deletes until space is freed (delete, compact, defragment each member) and the alarm disarmed (`etcdctl alarm disarm`).", a.Member)})
		} else {
			lines = append(lines, []string{fmt.Sprintf("etcd alarm: %s on member %s.", a.Alarm, a.Member)})
		}
	}
	return render.Section{Rows: lines}
}

// etcdName is how the table names an etcd: the servers of an override, or
// the main one's flag.
func etcdName(servers []string) string {
	if len(servers) == 0 {
		return "--etcd-servers"
	}
	return strings.Join(servers, ",")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
