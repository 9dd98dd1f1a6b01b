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

	"github.com/regctl/regctl/internal/storedvalue"
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
	ReasonPlaintext        = "plaintext"              // an encrypted resource's value in plain text
	ReasonStaleKey         = "stale-key"              // not written with the config's write key
	ReasonOldVersion       = "old-version"            // not stored at the storage version
	ReasonNewerVersion     = "newer-version"          // stored at a more mature version than the storage version
	ReasonNotStoredVersion = "not-in-stored-versions" // a CRD's objects at a version its storedVersions omits
	ReasonUndecryptable    = "undecryptable"          // damaged: the key that encrypted it decrypts other values
	ReasonKeyMissing       = "key-missing"            // encrypted with a key the config lacks, or no config given
	ReasonKeyMismatch      = "key-mismatch"           // the config's key of that name decrypts none of its values
	ReasonUndecodable      = "undecodable"            // the storage codec cannot decode it
	ReasonWrongKey         = "wrong-key"              // its namespace/name belong at another key
	ReasonWrongKind        = "wrong-kind"             // not the resource's kind
	ReasonUnknownFields    = "unknown-fields"         // fields its type does not declare
	ReasonUnclaimed        = "unclaimed"              // no path of the map stores it
	ReasonNamespaceGone    = "namespace-gone"         // objects in a namespace that does not exist
	maxListedPerResource   = 100                      // findings listed per resource and reason
	largestListed          = 3                        // largest objects listed per resource
	unknownFieldsPerObject = 5                        // unknown field paths named per object
	identity               = "identity"               // the encryption of a plain value
	unknownEncoding        = "unknown"                // the encoding of an unreadable value
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
	// KeysThatDecryptNothing are the keys of the encryption config that
	// decrypted none of the values encrypted with their name, with how
	// many they failed on: likely not the server's keys.
	KeysThatDecryptNothing []KeyCount `json:"keysThatDecryptNothing,omitempty"`
	// Alarms are the alarms etcd's members have raised when the scan ran
	// ("NOSPACE on member 8e9e05c52164694d"): NOSPACE refuses every write
	// but deletes.
	Alarms []string `json:"alarms,omitempty"`

	// keyFindings are the values unread for a key, which encryption
	// findings say already (key-missing, key-mismatch).
	keyFindings int64
}

// KeyCount is a provider and key (aescbc:v1:key1), and how many values.
type KeyCount struct {
	Key    string `json:"key"`
	Values int64  `json:"values"`
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
	// removed from status.storedVersions; Missing the versions in use
	// that the CRD's status.storedVersions does not list.
	InUse     []string `json:"inUse"`
	Droppable []string `json:"droppable,omitempty"`
	Missing   []string `json:"missing,omitempty"`
	// Newer are the versions in use more mature than the one this
	// release writes (a built-in resource's only).
	Newer []string `json:"newer,omitempty"`
	// Unread counts the values whose version could not be read
	// (undecryptable, undecodable): while there are any, the verdict
	// cannot tell what is in use.
	Unread  int64  `json:"unread,omitempty"`
	Verdict string `json:"verdict"`
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
	// Missing is set for a value encrypted with a key the encryption
	// config lacks (or with none given): the flags' doing, the same for
	// every such value.
	Missing *storedvalue.KeyError `json:"-"`
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

// Failed lists the kinds of finding among kinds the report has, and the
// kinds it cannot tell for values it could not read.
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
		n := r.Unread(k)
		if k == Encryption {
			// Those a key finding names are counted above.
			n -= r.keyFindings
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("%d %s it could not read, so cannot tell their %s", n, values(n), k))
		}
	}
	return out
}

// Unread counts the values whose kind of finding could not be told: those
// it could not decrypt, for encryption (with another config they may be
// fine, or stale); those it could not decrypt or decode, for versions.
func (r *Report) Unread(kind string) int64 {
	var n int64
	for _, res := range r.Resources {
		switch {
		case kind == Encryption && res.Encryption != nil:
			n += res.Encryption.Unreadable
		case kind == Versions && res.Versions != nil:
			n += res.Versions.Unread
		}
	}
	return n
}

func values(n int64) string {
	if n == 1 {
		return "value"
	}
	return "values"
}

func (r *Report) has(section string) bool {
	for _, s := range r.Scanned {
		if s == section {
			return true
		}
	}
	return false
}

// settle says which stored versions are in use and what can go. custom
// is set for a custom resource: its storage version is its CRD's, and its
// CRD lists the versions in use in status.storedVersions.
func (v *StoredVersions) settle(custom bool) {
	v.InUse = v.InUse[:0]
	for version, n := range v.Counts {
		if n > 0 {
			v.InUse = append(v.InUse, version)
		}
	}
	sort.Strings(v.InUse)
	var old, newer []string
	for _, version := range v.InUse {
		switch {
		case version == v.Writes:
		case !custom && storedvalue.Newer(version, v.Writes):
			v.Newer = append(v.Newer, version)
			newer = append(newer, fmt.Sprintf("%d at %s", v.Counts[version], version))
		default:
			old = append(old, fmt.Sprintf("%d at %s", v.Counts[version], version))
		}
	}
	if custom && v.CRDStoredVersions != nil {
		for _, gv := range v.InUse {
			if !slices.ContainsFunc(v.CRDStoredVersions, func(stored string) bool { return containsVersion([]string{gv}, stored, "") }) {
				v.Missing = append(v.Missing, gv)
			}
		}
	}
	if v.Unread == 0 {
		// Which versions no value uses can be told only when every
		// value was read.
		for _, stored := range v.CRDStoredVersions {
			if !containsVersion(v.InUse, stored, v.Writes) {
				v.Droppable = append(v.Droppable, stored)
			}
		}
	}
	switch {
	case v.Unread > 0:
		v.Verdict = fmt.Sprintf("cannot tell: %d %s could not be read (`--only encryption,corrupt` lists them)", v.Unread, values(v.Unread))
		if len(v.InUse) > 0 {
			v.Verdict += "; of the rest, " + strings.Join(inUseAt(v), ", ")
		}
	case len(v.InUse) == 0:
		v.Verdict = "no values"
	case len(v.Missing) > 0:
		v.Verdict = fmt.Sprintf("%s in use but not in status.storedVersions, so nothing stops its removal from the CRD, which would lose those objects: rewrite them (storage version migration)", strings.Join(v.Missing, ", "))
	case len(newer) > 0:
		v.Verdict = fmt.Sprintf("%s, newer than the %s this release writes: written by a newer kube-apiserver? read and write them with the regctl of its release", strings.Join(newer, ", "), v.Writes)
		if len(old) > 0 {
			v.Verdict += "; " + strings.Join(old, ", ")
		}
	case len(old) == 0 && len(v.Droppable) > 0:
		v.Verdict = fmt.Sprintf("all at %s; %s can be dropped from status.storedVersions", v.Writes, strings.Join(v.Droppable, ", "))
	case len(old) == 0:
		v.Verdict = "all at " + v.Writes
	default:
		v.Verdict = fmt.Sprintf("%s: rewrite them (storage version migration) before the server stops reading them", strings.Join(old, ", "))
	}
}

// inUseAt is "5 at v1, 2 at v1beta1".
func inUseAt(v *StoredVersions) []string {
	out := make([]string, 0, len(v.InUse))
	for _, version := range v.InUse {
		out = append(out, fmt.Sprintf("%d at %s", v.Counts[version], version))
	}
	return out
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
