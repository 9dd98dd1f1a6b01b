package scan

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/regctl/regctl/internal/storedvalue"
)

// tally is one worker's figures; the workers' are added up at the end, so
// no lock is taken per key.
type tally struct {
	keys, bytes int64
	last        *target
	resources   map[resourceKey]*resourceTally
	orphans     map[string]*Orphan
	allocations []SizedKey
	leases      []SizedKey
	findings    map[findingKey][]Finding
	counts      map[string]int64
	// storedVersions are the CRDs' status.storedVersions, by the group
	// and plural of their custom resources.
	storedVersions map[schema.GroupResource][]string
	// namespaces are the namespaces stored; inNamespace counts the
	// objects of each namespaced resource by namespace.
	namespaces  map[string]bool
	inNamespace map[resourceKey]int64
	// onFinding is Options.OnFinding.
	onFinding func(Finding)
	// decrypted counts the values read by the provider and key that
	// encrypted them; keyFails are those a key of the config did not
	// decrypt, told apart once every value is read (keyFailed).
	decrypted map[string]int64
	keyFails  []keyFail
	// keyFindings counts the values found unreadable for a key the config
	// lacks or does not hold as the server does.
	keyFindings int64
}

// keyFail is a value a key of the encryption config did not decrypt.
type keyFail struct {
	t         *target
	namespace string
	key       string
	// envelope is the provider and key it is encrypted with; name is the
	// same as a scan says it (with a KMS v2 key ID).
	envelope, name string
	err            *storedvalue.KeyError
}

type resourceKey struct {
	t         *target
	namespace string
}

type findingKey struct {
	kind, reason string
	t            *target
}

type resourceTally struct {
	keys, bytes                  int64
	largest                      []SizedKey
	encodings, encryption        map[string]int64
	stale, plaintext, unreadable int64
	// unread counts the values whose content could not be read:
	// undecryptable or undecodable.
	unread            int64
	versions, corrupt map[string]int64
}

func newTally() *tally {
	return &tally{
		resources:      map[resourceKey]*resourceTally{},
		orphans:        map[string]*Orphan{},
		findings:       map[findingKey][]Finding{},
		counts:         map[string]int64{},
		storedVersions: map[schema.GroupResource][]string{},
		namespaces:     map[string]bool{},
		inNamespace:    map[resourceKey]int64{},
		decrypted:      map[string]int64{},
	}
}

func (tl *tally) resource(t *target, namespace string) *resourceTally {
	k := resourceKey{t, namespace}
	r, ok := tl.resources[k]
	if !ok {
		r = &resourceTally{encodings: map[string]int64{}, encryption: map[string]int64{}, versions: map[string]int64{}, corrupt: map[string]int64{}}
		tl.resources[k] = r
	}
	return r
}

// find records a finding. A worker sees its keys in order, so the first
// listed are its smallest.
func (tl *tally) find(kind, reason string, t *target, key, detail string) {
	tl.record(Finding{Kind: kind, Reason: reason, Resource: t.h.Path, Key: key, Detail: detail}, t)
}

// findMissing records a value encrypted with a key the encryption config
// lacks (or with no config given): the flags' doing, not the value's.
func (tl *tally) findMissing(t *target, key, detail string, missing *storedvalue.KeyError) {
	tl.keyFindings++
	tl.record(Finding{Kind: Encryption, Reason: ReasonKeyMissing, Resource: t.h.Path, Key: key, Detail: detail, Missing: missing}, t)
}

func (tl *tally) record(f Finding, t *target) {
	kind, reason := f.Kind, f.Reason
	tl.counts[kind]++
	if tl.onFinding != nil {
		tl.onFinding(f)
	}
	k := findingKey{kind, reason, t}
	if len(tl.findings[k]) < maxListedPerResource {
		tl.findings[k] = append(tl.findings[k], f)
	}
}

// orphan accounts for a key no path claims, under its group: the next
// segment of its path, and the one after when that is an API group's
// (example.com/widgets/), where a deleted CRD's objects are.
func (tl *tally) orphan(root, key string, size int64, listed bool) {
	rest := strings.TrimPrefix(key, root)
	group, after, _ := strings.Cut(rest, "/")
	prefix := root + group
	if strings.Contains(group, ".") {
		if resource, _, ok := strings.Cut(after, "/"); ok {
			prefix += "/" + resource
		}
	}
	if prefix != key {
		prefix += "/"
	}
	o, ok := tl.orphans[prefix]
	if !ok {
		o = &Orphan{KeyPrefix: prefix}
		tl.orphans[prefix] = o
	}
	o.Keys++
	o.Bytes += size
	if !listed {
		return
	}
	tl.counts[Orphans]++
	k := findingKey{Orphans, ReasonUnclaimed, nil}
	if len(tl.findings[k]) < maxListedPerResource {
		tl.findings[k] = append(tl.findings[k], Finding{Kind: Orphans, Reason: ReasonUnclaimed, Key: key, Detail: "no path of the storage map stores it"})
	}
}

func (tl *tally) allocation(key string, size int64) {
	tl.allocations = append(tl.allocations, SizedKey{Key: key, Bytes: size})
}

func (tl *tally) lease(key string, size int64) {
	tl.leases = append(tl.leases, SizedKey{Key: key, Bytes: size})
}

// result adds up the workers' tallies into the report.
func (s *scanner) result(etcdPrefix string, rev int64, sections []string, targets []*target) *Report {
	r := &Report{EtcdPrefix: etcdPrefix, Revision: rev, Scanned: sections, FindingCounts: map[string]int64{}}
	resources := map[resourceKey]*resourceTally{}
	orphans := map[string]*Orphan{}
	findings := map[findingKey][]Finding{}
	storedVersions := map[schema.GroupResource][]string{}
	namespaces := map[string]bool{}
	inNamespace := map[resourceKey]int64{}
	decrypted := map[string]int64{}
	var keyFails []keyFail
	for _, tl := range s.tallies {
		r.Keys += tl.keys
		r.Bytes += tl.bytes
		for k, n := range tl.decrypted {
			decrypted[k] += n
		}
		keyFails = append(keyFails, tl.keyFails...)
		r.keyFindings += tl.keyFindings
		for k, v := range tl.resources {
			resources[k] = merge(resources[k], v)
		}
		for k, o := range tl.orphans {
			if have, ok := orphans[k]; ok {
				have.Keys += o.Keys
				have.Bytes += o.Bytes
			} else {
				orphans[k] = o
			}
		}
		for k, f := range tl.findings {
			findings[k] = append(findings[k], f...)
		}
		for k, n := range tl.counts {
			r.FindingCounts[k] += n
		}
		maps.Copy(storedVersions, tl.storedVersions)
		maps.Copy(namespaces, tl.namespaces)
		for k, n := range tl.inNamespace {
			inNamespace[k] += n
		}
		r.Allocations = append(r.Allocations, tl.allocations...)
		r.Leases = append(r.Leases, tl.leases...)
	}
	s.keyFailed(r, keyFails, decrypted, resources, findings)
	byKey := func(a, b SizedKey) int { return strings.Compare(a.Key, b.Key) }
	slices.SortFunc(r.Allocations, byKey)
	slices.SortFunc(r.Leases, byKey)
	// Every kind scanned is counted, none found included; the others not.
	for _, kind := range FindingKinds {
		if !s.sections[kind] {
			delete(r.FindingCounts, kind)
		} else if _, ok := r.FindingCounts[kind]; !ok {
			r.FindingCounts[kind] = 0
		}
	}

	for _, k := range sortedKeys(resources) {
		res := s.resourceReport(k, resources[k], storedVersions)
		r.Resources = append(r.Resources, res)
		if v := res.Versions; v != nil && len(v.Missing) > 0 {
			// Known once the CRD and all its objects are read: one
			// finding for the resource, under its key prefix.
			r.FindingCounts[Versions]++
			fk := findingKey{Versions, ReasonNotStoredVersion, k.t}
			findings[fk] = append(findings[fk], Finding{Kind: Versions, Reason: ReasonNotStoredVersion, Resource: res.Resource, Key: res.KeyPrefix,
				Detail: fmt.Sprintf("objects stored at %s, which the CRD's status.storedVersions [%s] does not list: removing that version from the CRD loses them", strings.Join(v.Missing, ", "), strings.Join(v.CRDStoredVersions, ", "))})
		}
	}
	if s.sections[Orphans] {
		for _, k := range slices.Sorted(maps.Keys(orphans)) {
			r.Orphans = append(r.Orphans, *orphans[k])
		}
	}
	if s.sections[Orphans] && s.namespaces != nil {
		s.namespaceGone(r, findings, namespaces, inNamespace)
	}
	// Findings in the order of their resources, then by reason and key.
	fkeys := slices.Collect(maps.Keys(findings))
	sort.Slice(fkeys, func(i, j int) bool {
		a, b := fkeys[i], fkeys[j]
		if (a.t == nil) != (b.t == nil) {
			return b.t == nil
		}
		if a.t != nil && a.t.order != b.t.order {
			return a.t.order < b.t.order
		}
		if a.kind != b.kind {
			return slices.Index(FindingKinds, a.kind) < slices.Index(FindingKinds, b.kind)
		}
		return a.reason < b.reason
	})
	for _, k := range fkeys {
		if !s.sections[k.kind] {
			continue
		}
		list := findings[k]
		sort.Slice(list, func(i, j int) bool { return list[i].Key < list[j].Key })
		r.Findings = append(r.Findings, list[:min(len(list), maxListedPerResource)]...)
	}
	return r
}

func (s *scanner) resourceReport(k resourceKey, v *resourceTally, storedVersions map[schema.GroupResource][]string) Resource {
	route := k.t.h.Route
	res := Resource{Resource: k.t.h.Path, Namespace: k.namespace, KeyPrefix: k.t.prefix, Keys: v.keys, Bytes: v.bytes, EtcdServers: route.EtcdServers}
	if k.namespace != "" {
		res.KeyPrefix += k.namespace + "/"
	}
	if s.sections[Size] {
		res.Largest = v.largest
	}
	if s.sections[Encoding] {
		res.Encoding = &Encodings{Counts: v.encodings, Writes: route.MediaType}
	}
	if s.sections[Encryption] {
		writes := route.Encryption
		if writes == "" {
			writes = identity
		}
		res.Encryption = &Encryptions{Counts: v.encryption, Writes: writes, StaleKey: v.stale, Plaintext: v.plaintext, Unreadable: v.unreadable}
	}
	if s.sections[Versions] {
		vs := &StoredVersions{Counts: v.versions, Writes: route.StorageVersion, Unread: v.unread}
		custom := k.t.custom
		if stored, ok := storedVersions[schema.GroupResource{Group: k.t.group, Resource: k.t.plural}]; ok && custom {
			vs.CRDStoredVersions = stored
		}
		vs.settle(custom)
		res.Versions = vs
	}
	if s.sections[Corrupt] && len(v.corrupt) > 0 {
		res.Corrupt = v.corrupt
	}
	return res
}

func merge(into, v *resourceTally) *resourceTally {
	if into == nil {
		return v
	}
	into.keys += v.keys
	into.bytes += v.bytes
	for _, k := range v.largest {
		into.largest = keepLargest(into.largest, k)
	}
	into.stale += v.stale
	into.plaintext += v.plaintext
	into.unreadable += v.unreadable
	into.unread += v.unread
	for _, m := range []struct{ into, from map[string]int64 }{
		{into.encodings, v.encodings}, {into.encryption, v.encryption}, {into.versions, v.versions}, {into.corrupt, v.corrupt},
	} {
		for k, n := range m.from {
			m.into[k] += n
		}
	}
	return into
}

// namespaceGone finds the objects left in namespaces that do not exist:
// the namespace controller deletes a namespace's objects before the
// namespace, so these were left by a namespace deleted by hand, or a
// partial restore. No server lists them under a namespace, and a namespace
// created again of that name would find them.
func (s *scanner) namespaceGone(r *Report, findings map[findingKey][]Finding, namespaces map[string]bool, inNamespace map[resourceKey]int64) {
	for _, k := range sortedKeys(inNamespace) {
		if namespaces[k.namespace] {
			continue
		}
		n := inNamespace[k]
		r.FindingCounts[Orphans]++
		fk := findingKey{Orphans, ReasonNamespaceGone, k.t}
		findings[fk] = append(findings[fk], Finding{Kind: Orphans, Reason: ReasonNamespaceGone, Resource: k.t.h.Path, Key: k.t.prefix + k.namespace + "/",
			Detail: fmt.Sprintf("%d %s in namespace %s, which does not exist: left by a namespace deleted without its objects", n, objectsNoun(n), k.namespace)})
	}
}

func objectsNoun(n int64) string {
	if n == 1 {
		return "object"
	}
	return "objects"
}

// sortedKeys are m's keys in the map's order of resources, then by
// namespace.
func sortedKeys[V any](m map[resourceKey]V) []resourceKey {
	keys := slices.Collect(maps.Keys(m))
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].t.order != keys[j].t.order {
			return keys[i].t.order < keys[j].t.order
		}
		return keys[i].namespace < keys[j].namespace
	})
	return keys
}

// keyFailed records the values a key of the encryption config did not
// decrypt, once every value is read. A key that decrypted none of the
// values encrypted with its name is likely not the server's: the flags'
// doing, said as an encryption finding that names the key. A key that
// decrypted others is the server's: the values it did not decrypt are
// damaged.
func (s *scanner) keyFailed(r *Report, fails []keyFail, decrypted map[string]int64, resources map[resourceKey]*resourceTally, findings map[findingKey][]Finding) {
	sort.Slice(fails, func(i, j int) bool { return fails[i].key < fails[j].key })
	failed := map[string]int64{}
	for _, f := range fails {
		failed[f.envelope]++
	}
	for _, envelope := range slices.Sorted(maps.Keys(failed)) {
		if decrypted[envelope] == 0 {
			r.KeysThatDecryptNothing = append(r.KeysThatDecryptNothing, KeyCount{Key: envelope, Values: failed[envelope]})
		}
	}
	for _, f := range fails {
		f.err.Values = int(failed[f.envelope])
		finding := Finding{Kind: Encryption, Reason: ReasonKeyMismatch, Resource: f.t.h.Path, Key: f.key, Missing: f.err,
			Detail: fmt.Sprintf("encrypted with %s, which the encryption config's %s %q decrypts no value with (%v): the config's key is likely not the server's", f.name, f.err.Envelope.Provider, f.err.Envelope.Key, f.err.Fails)}
		if n := decrypted[f.envelope]; n > 0 {
			finding = Finding{Kind: Corrupt, Reason: ReasonUndecryptable, Resource: f.t.h.Path, Key: f.key,
				Detail: fmt.Sprintf("encrypted with %s, which the encryption config's key decrypts %d other %s with, but not this one (%v): the value is damaged", f.name, n, values(n), f.err.Fails)}
			if acc := resources[resourceKey{f.t, f.namespace}]; acc != nil {
				acc.corrupt[ReasonUndecryptable]++
			}
		}
		if finding.Kind == Encryption {
			r.keyFindings++
		}
		r.FindingCounts[finding.Kind]++
		if s.opts.OnFinding != nil {
			s.opts.OnFinding(finding)
		}
		k := findingKey{finding.Kind, finding.Reason, f.t}
		findings[k] = append(findings[k], finding)
	}
}
