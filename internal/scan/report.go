// Package scan reads every key under the etcd prefix once, through the
// storage map, and reports per resource what is stored and how: sizes,
// encodings, encryption, storage versions, and the values the server would
// not read as it writes them (corrupt, stale, orphaned).
package scan

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Sections of a scan; --only picks some, --fail-on the kinds of finding
// that fail it.
const (
	Size       = "size"
	Encoding   = "encoding"
	Encryption = "encryption"
	Versions   = "versions"
	Corrupt    = "corrupt"
	Orphans    = "orphans"
)

// Sections are every section, in the report's order.
var Sections = []string{Size, Encoding, Encryption, Versions, Corrupt, Orphans}

// FindingKinds are the sections that have findings.
var FindingKinds = []string{Encryption, Versions, Corrupt, Orphans}

// Reasons of findings.
const (
	ReasonPlaintext        = "plaintext"      // an encrypted resource's value in plain text
	ReasonStaleKey         = "stale-key"      // not written with the config's write key
	ReasonOldVersion       = "old-version"    // not stored at the storage version
	ReasonUndecryptable    = "undecryptable"  // no configured key reads it
	ReasonUndecodable      = "undecodable"    // the storage codec cannot decode it
	ReasonWrongKey         = "wrong-key"      // its namespace/name belong at another key
	ReasonWrongKind        = "wrong-kind"     // not the resource's kind
	ReasonUnknownFields    = "unknown-fields" // fields its type does not declare
	ReasonUnclaimed        = "unclaimed"      // no path of the map stores it
	maxListedPerResource   = 100              // findings listed per resource and reason
	largestListed          = 3                // largest objects listed per resource
	unknownFieldsPerObject = 5                // unknown field paths named per object
	identity               = "identity"       // the encryption of a plain value
	unknownEncoding        = "unknown"        // the encoding of an unreadable value
	crdResource            = "customresourcedefinitions.apiextensions.k8s.io"
)

// Report is what a scan found.
type Report struct {
	EtcdPrefix string `json:"etcdPrefix"`
	// Revision is the etcd revision every key was read at.
	Revision int64    `json:"revision"`
	Scanned  []string `json:"sections"`
	Keys     int64    `json:"keys"`
	Bytes    int64    `json:"bytes"`
	// Resources are the stored resources with keys, in the map's order
	// (by namespace within one, with --by namespace).
	Resources []Resource `json:"resources"`
	Orphans   []Orphan   `json:"orphans,omitempty"`
	// Allocations are the keys the server's service allocators keep their
	// ranges in (node ports, cluster IPs), beside the storage map.
	Allocations []SizedKey `json:"allocations,omitempty"`
	// Leases are the endpoint leases the apiservers keep, with a TTL,
	// beside the storage map (one per running server).
	Leases []SizedKey `json:"leases,omitempty"`
	// FindingCounts are the findings of each kind; Findings lists them,
	// at most 100 per resource and reason, smallest keys first.
	FindingCounts map[string]int64 `json:"findingCounts"`
	Findings      []Finding        `json:"findings,omitempty"`
}

// Resource is what one stored resource (one namespace of it, with --by
// namespace) holds.
type Resource struct {
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	KeyPrefix string `json:"keyPrefix"`
	Keys      int64  `json:"keys"`
	Bytes     int64  `json:"bytes"`
	// EtcdServers are set for a resource stored on other servers than the
	// rest (--etcd-servers-overrides).
	EtcdServers []string        `json:"etcdServers,omitempty"`
	Largest     []SizedKey      `json:"largest,omitempty"`
	Encoding    *Encodings      `json:"encoding,omitempty"`
	Encryption  *Encryptions    `json:"encryption,omitempty"`
	Versions    *StoredVersions `json:"versions,omitempty"`
	// Corrupt counts the values the server cannot read as this
	// resource's, by reason.
	Corrupt map[string]int64 `json:"corrupt,omitempty"`
}

// SizedKey is a key and the size of its value.
type SizedKey struct {
	Key   string `json:"key"`
	Bytes int64  `json:"bytes"`
}

// Encodings counts values by media type, beside the one the server writes.
type Encodings struct {
	Counts map[string]int64 `json:"counts"`
	Writes string           `json:"writes"`
}

// Encryptions counts values by how they are encrypted (provider:version:key,
// with the KMS v2 key ID, or identity), beside what the server writes.
type Encryptions struct {
	Counts map[string]int64 `json:"counts"`
	Writes string           `json:"writes"`
	// StaleKey counts values the config reads but would write with another
	// key (or provider); Plaintext values in plain text of a resource the
	// config encrypts; Unreadable values no configured key reads.
	StaleKey   int64 `json:"staleKey,omitempty"`
	Plaintext  int64 `json:"plaintext,omitempty"`
	Unreadable int64 `json:"unreadable,omitempty"`
}

// StoredVersions counts values by the API version they are stored at, beside the
// storage version the server writes.
type StoredVersions struct {
	Counts map[string]int64 `json:"counts"`
	Writes string           `json:"writes"`
	// CRDStoredVersions is a custom resource's CRD's status.storedVersions.
	CRDStoredVersions []string `json:"crdStoredVersions,omitempty"`
	// InUse are the versions some value is stored at; Droppable the stored
	// versions of the CRD no value is stored at anymore, which can be
	// removed from status.storedVersions.
	InUse     []string `json:"inUse"`
	Droppable []string `json:"droppable,omitempty"`
	Verdict   string   `json:"verdict"`
}

// Orphan is a group of keys under the prefix that no path of the map
// claims: a deleted CRD's objects, an API the server no longer serves.
type Orphan struct {
	KeyPrefix string `json:"keyPrefix"`
	Keys      int64  `json:"keys"`
	Bytes     int64  `json:"bytes"`
}

// Finding is one value that needs a look.
type Finding struct {
	Kind     string `json:"kind"`
	Reason   string `json:"reason"`
	Resource string `json:"resource,omitempty"`
	Key      string `json:"key"`
	Detail   string `json:"detail"`
}

// SectionsFor is what a scan limited to only looks at, in the report's
// order whatever the flag's: only, and the finding kinds failOn names, as a
// --fail-on kind the scan would not look for could never fail. Every
// section when only is empty.
func SectionsFor(only, failOn []string) []string {
	if len(only) == 0 {
		return nil
	}
	wanted := append(slices.Clone(only), failOn...)
	return slices.DeleteFunc(slices.Clone(Sections), func(s string) bool { return !slices.Contains(wanted, s) })
}

// Failed lists the kinds of finding among kinds the report has.
func (r *Report) Failed(kinds []string) []string {
	var out []string
	for _, k := range kinds {
		if r.FindingCounts[k] > 0 {
			noun := "findings"
			if r.FindingCounts[k] == 1 {
				noun = "finding"
			}
			out = append(out, fmt.Sprintf("%d %s %s", r.FindingCounts[k], k, noun))
		}
	}
	return out
}

func (r *Report) has(section string) bool {
	for _, s := range r.Scanned {
		if s == section {
			return true
		}
	}
	return false
}

// verdict says which stored versions are in use and what can go.
func (v *StoredVersions) settle() {
	v.InUse = v.InUse[:0]
	for version, n := range v.Counts {
		if n > 0 {
			v.InUse = append(v.InUse, version)
		}
	}
	sort.Strings(v.InUse)
	var old []string
	for _, version := range v.InUse {
		if version != v.Writes {
			old = append(old, fmt.Sprintf("%d at %s", v.Counts[version], version))
		}
	}
	for _, stored := range v.CRDStoredVersions {
		gv := stored
		if !containsVersion(v.InUse, gv, v.Writes) {
			v.Droppable = append(v.Droppable, stored)
		}
	}
	switch {
	case len(v.InUse) == 0:
		v.Verdict = "no values"
	case len(old) == 0 && len(v.Droppable) > 0:
		v.Verdict = fmt.Sprintf("all at %s; %s can be dropped from status.storedVersions", v.Writes, strings.Join(v.Droppable, ", "))
	case len(old) == 0:
		v.Verdict = "all at " + v.Writes
	default:
		v.Verdict = fmt.Sprintf("%s: rewrite them (storage version migration) before the server stops reading them", strings.Join(old, ", "))
	}
}

// containsVersion tells whether a CRD's stored version (a bare version:
// v1beta1) is one of the group versions in use (example.com/v1beta1) or
// the one written.
func containsVersion(inUse []string, version, writes string) bool {
	matches := func(gv string) bool { return gv == version || strings.HasSuffix(gv, "/"+version) }
	if matches(writes) {
		return true
	}
	for _, gv := range inUse {
		if matches(gv) {
			return true
		}
	}
	return false
}
