// Package migrate rewrites the values a scan finds stale: written with a
// key the encryption config no longer writes with, in plain text where it
// encrypts, or at another version than the storage version. Each is
// rewritten through its store as the server's storage version migration
// rewrites it: the object is read and updated unchanged, with its
// resourceVersion as precondition, so the store encodes it at the storage
// version and encrypts it with the config's first key. Once every value
// of a custom resource is at the storage version, the other versions are
// dropped from its CRD's status.storedVersions, as the migration runner
// drops them.
package migrate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"golang.org/x/time/rate"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/util/retry"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/render"
	"github.com/regctl/regctl/internal/scan"
	"github.com/regctl/regctl/internal/storedvalue"
	"github.com/regctl/regctl/internal/stores"
)

// What a migration fixes: the reasons of the scan findings it rewrites.
var (
	encryptionReasons = []string{scan.ReasonStaleKey, scan.ReasonPlaintext}
	versionReasons    = []string{scan.ReasonOldVersion}
	// unreadableReasons are values a rewrite cannot read, which are
	// listed and never rewritten.
	unreadableReasons = []string{scan.ReasonUndecryptable, scan.ReasonUndecodable}
)

// lossFinding is a loss the store refused a rewrite for as a scan would
// have found it.
func lossFinding(resource, key string, loss *stores.LossError) scan.Finding {
	f := scan.Finding{Kind: scan.Corrupt, Reason: scan.ReasonUnknownFields, Resource: resource, Key: key, Detail: loss.Loss.Error()}
	if loss.StoredAt != "" {
		f.Kind, f.Reason = scan.Versions, scan.ReasonNewerVersion
	}
	return f
}

// lossReason is why a rewrite by this release would lose part of a value,
// "" when it would not: the value is then kept as it is, and listed.
func lossReason(f scan.Finding, req Request) string {
	switch {
	case f.Reason == scan.ReasonNewerVersion:
		return f.Reason
	case f.Reason == scan.ReasonUnknownFields && !req.DropUnknownFields:
		return f.Reason
	}
	return ""
}

// Request is one migration.
type Request struct {
	// Encryption and Versions are what to fix: stale keys and plain
	// values, and values at another version than the storage version.
	Encryption, Versions bool
	// Prefixes, when set, limit the migration to the keys under them
	// (the resources and namespace the command names).
	Prefixes []string
	// DryRun selects and reports, and writes nothing.
	DryRun bool
	// QPS bounds the rewrites a second (0: unbounded).
	QPS float64
	// ChunkSize is how many keys one etcd range request of the scan reads.
	ChunkSize int64
	// KeepStoredVersions leaves the CRDs' status.storedVersions alone.
	KeepStoredVersions bool
	// DropUnknownFields rewrites values that hold fields this release
	// does not know, dropping them; without it they are kept as they
	// are and listed (Report.Kept). Values stored at a newer version are
	// kept either way.
	DropUnknownFields bool
	// Progress, when set, is called about five times a second while
	// values are rewritten.
	Progress func(Progress)
	// Output is the report's format (Migrate).
	Output render.Format
}

// CRDStatusPath is the path of the CRDs' status, which storedVersions are
// written through.
var CRDStatusPath = handle.CRDsPath + "/status"

// crdStatusOf is the handle of the CRDs' status among handles, nil when
// the map serves no CRDs (--runtime-config).
func crdStatusOf(handles []*handle.Handle) *handle.Handle {
	for _, h := range handles {
		if h.Path == CRDStatusPath {
			return h
		}
	}
	return nil
}

// Prefixes are the key prefixes a migration reads: nil for every key with
// neither types nor namespace; the namespace of every namespaced resource
// of all; or those of the named handles (in namespace, for the namespaced
// ones).
func Prefixes(all, named []*handle.Handle, namespace string) ([]string, error) {
	handles := named
	if len(named) == 0 {
		if namespace == "" {
			return nil, nil
		}
		handles = all
	}
	var prefixes []string
	for _, h := range handles {
		if !h.Stored() {
			if len(named) > 0 {
				return nil, fmt.Errorf("%s is not stored in etcd", h.Path)
			}
			continue
		}
		if namespace != "" && len(named) == 0 && !h.Resource.Namespaced {
			continue
		}
		ns := ""
		if h.Resource.Namespaced {
			ns = namespace
		}
		p, err := h.KeyPrefix(ns)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(prefixes, p) {
			prefixes = append(prefixes, p)
		}
	}
	return prefixes, nil
}

// Progress is how far the rewrites are: of the resource being rewritten,
// and of all.
type Progress struct {
	Resource                  string
	ResourceDone, ResourceAll int64
	Done, Total               int64
	Elapsed                   time.Duration
}

// Report is what a migration chose and did.
type Report struct {
	// Revision is the etcd revision the values were chosen at.
	Revision int64 `json:"revision"`
	DryRun   bool  `json:"dryRun,omitempty"`
	// Resources are the resources with values to rewrite, in the map's
	// order.
	Resources []Resource `json:"resources"`
	// StoredVersions are the CRDs whose status.storedVersions the
	// migration changed (or, dry, would change).
	StoredVersions []StoredVersions `json:"storedVersions,omitempty"`
	// Unreadable are the values no configured key reads or the storage
	// codec cannot decode: never rewritten.
	Unreadable []scan.Finding `json:"unreadable,omitempty"`
	// Kept are the values chosen that a rewrite by this release would
	// lose part of (fields it does not know, a newer storage version):
	// never rewritten.
	Kept []scan.Finding `json:"kept,omitempty"`
	// Failed are the rewrites the store refused.
	Failed []Failure `json:"failed,omitempty"`
	// Interrupted is set when the migration was stopped before it was
	// done: what it reports rewritten is all it rewrote.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Resource is what a migration chose and did for one resource.
type Resource struct {
	Resource string `json:"resource"`
	// Selected counts the values chosen, Reasons them by why (a value
	// may have two reasons).
	Selected int64            `json:"selected"`
	Reasons  map[string]int64 `json:"reasons"`
	// Rewritten are the values written again; Current those found
	// rewritten (or deleted) since they were chosen; Kept those a
	// rewrite would lose part of; Failed those the store refused.
	Rewritten int64 `json:"rewritten"`
	Current   int64 `json:"current,omitempty"`
	Kept      int64 `json:"kept,omitempty"`
	Failed    int64 `json:"failed,omitempty"`
}

// StoredVersions is a CRD's status.storedVersions before and after.
type StoredVersions struct {
	CRD    string   `json:"crd"`
	Before []string `json:"before"`
	After  []string `json:"after"`
	// Kept says why they were left as they are, when they were.
	Kept string `json:"kept,omitempty"`
}

// Failure is a value the store would not rewrite.
type Failure struct {
	Resource string `json:"resource"`
	Key      string `json:"key"`
	Error    string `json:"error"`
}

// NotDone tells whether some value that needs a rewrite is left as it was:
// unreadable, refused, or not reached.
func (r *Report) NotDone() bool {
	return len(r.Unreadable) > 0 || len(r.Kept) > 0 || len(r.Failed) > 0 || r.Interrupted
}

// chosen is one value a migration rewrites.
type chosen struct {
	key     string
	reasons []string
}

// Run chooses the values to rewrite with a scan of every key of ks, then
// rewrites them through their stores, and drops versions no value is
// stored at any more from the CRDs' status.storedVersions through the CRD
// status path, when the map serves it. On an interrupt it stops between
// two objects and returns what it did with the context's cause.
func Run(ctx context.Context, ks handle.Keyspace, req Request) (*Report, error) {
	handles, crdStatus := ks.Handles, crdStatusOf(ks.Handles)
	wanted := reasons(req)
	selected := map[string][]chosen{}
	// lost are the values a rewrite would lose part of, by key: only
	// those chosen are kept apart and listed.
	lost := map[string]scan.Finding{}
	report := &Report{DryRun: req.DryRun, Resources: []Resource{}}
	// A value encrypted with a key the config lacks needs other flags,
	// not a rewrite: the first one stops the migration before anything is
	// written, and says which key to pass.
	scanning, needsKey := context.WithCancelCause(ctx)
	defer needsKey(nil)
	scanned, err := scan.Run(scanning, ks, scan.Options{
		Sections: []string{scan.Encryption, scan.Versions},
		PageSize: scan.PageSize(req.ChunkSize),
		Under:    req.Prefixes,
		Losses:   true,
		OnFinding: func(f scan.Finding) {
			if f.Missing != nil {
				needsKey(f.Missing)
				return
			}
			if slices.Contains(unreadableReasons, f.Reason) {
				report.Unreadable = append(report.Unreadable, f)
				return
			}
			if lossReason(f, req) != "" {
				if _, ok := lost[f.Key]; !ok {
					lost[f.Key] = f
				}
				return
			}
			if !slices.Contains(wanted, f.Reason) {
				return
			}
			values := selected[f.Resource]
			if i := len(values) - 1; i >= 0 && values[i].key == f.Key {
				values[i].reasons = append(values[i].reasons, f.Reason)
				return
			}
			selected[f.Resource] = append(values, chosen{key: f.Key, reasons: []string{f.Reason}})
		},
	})
	if err != nil {
		return nil, err
	}
	// A key the config holds that decrypts none of its values is told
	// once the scan has read them all: nothing is written then either,
	// as the config's first key may not be one the server reads.
	var keyErr *storedvalue.KeyError
	if cause := context.Cause(scanning); errors.As(cause, &keyErr) {
		return nil, cause
	}
	report.Revision = scanned.Revision
	sort.Slice(report.Unreadable, func(i, j int) bool { return report.Unreadable[i].Key < report.Unreadable[j].Key })
	kept := map[string]int64{}
	var chosenCount int64
	for resource, values := range selected {
		values = slices.DeleteFunc(values, func(v chosen) bool {
			f, ok := lost[v.key]
			if ok {
				report.Kept = append(report.Kept, f)
				kept[resource]++
			}
			return ok
		})
		selected[resource] = values
		chosenCount += int64(len(values))
	}
	sort.Slice(report.Kept, func(i, j int) bool { return report.Kept[i].Key < report.Kept[j].Key })

	byPath := map[string]*handle.Handle{}
	for _, h := range handles {
		if _, ok := byPath[h.Path]; !ok {
			byPath[h.Path] = h
		}
	}
	m := &migration{req: req, report: report, total: chosenCount}
	// An update in a namespace that is gone is refused, as the server's
	// NamespaceLifecycle admission refuses it.
	if h := byPath["namespaces"]; h != nil {
		m.namespaces = stores.NewNamespaceCache(h)
	}
	m.limit = limiter(req.QPS)
	stop := m.showProgress()
	defer stop()
	for _, r := range scanned.Resources {
		values := selected[r.Resource]
		if len(values) == 0 && kept[r.Resource] == 0 {
			continue
		}
		// A worker's findings come in key order, the workers' interleaved.
		sort.Slice(values, func(i, j int) bool { return values[i].key < values[j].key })
		res := Resource{Resource: r.Resource, Reasons: map[string]int64{}, Kept: kept[r.Resource]}
		for _, v := range values {
			res.Selected++
			for _, reason := range v.reasons {
				res.Reasons[reason]++
			}
		}
		report.Resources = append(report.Resources, res)
		if req.DryRun || len(values) == 0 {
			continue
		}
		if err := m.rewriteAll(ctx, byPath[r.Resource], values, &report.Resources[len(report.Resources)-1]); err != nil {
			if ctx.Err() != nil {
				report.Interrupted = true
				return report, context.Cause(ctx)
			}
			return report, err
		}
	}
	if !req.Versions || req.KeepStoredVersions {
		return report, nil
	}
	for _, r := range scanned.Resources {
		if err := m.storedVersions(ctx, r, byPath[r.Resource], crdStatus); err != nil {
			if ctx.Err() != nil {
				report.Interrupted = true
				return report, context.Cause(ctx)
			}
			return report, err
		}
	}
	return report, nil
}

// reasons are the findings req rewrites.
func reasons(req Request) []string {
	var out []string
	if req.Encryption {
		out = append(out, encryptionReasons...)
	}
	if req.Versions {
		out = append(out, versionReasons...)
	}
	return out
}

// limiter bounds the rewrites to qps a second (nil: unbounded), with a
// second's worth at once, as client-go's limiter bursts: a short migration
// is not held back, a long one keeps to the rate.
func limiter(qps float64) *rate.Limiter {
	if qps <= 0 {
		return nil
	}
	return rate.NewLimiter(rate.Limit(qps), max(1, int(qps)))
}

type migration struct {
	req        Request
	report     *Report
	limit      *rate.Limiter
	namespaces *stores.NamespaceCache
	// What progress shows: the values dealt with, of the resource being
	// rewritten and of all.
	mu                        sync.Mutex
	current                   string
	resourceDone, resourceAll int64
	done, total               int64
}

// writers is how many rewrites are in flight at once: each waits for
// etcd to commit it, and etcd commits concurrent writes together.
const writers = 8

// rewriteAll rewrites the chosen values of h's resource, writers at a time,
// in key order.
func (m *migration) rewriteAll(ctx context.Context, h *handle.Handle, values []chosen, res *Resource) error {
	if h == nil {
		return fmt.Errorf("no path of the map stores %s", res.Resource)
	}
	serving, err := h.Serving()
	if err != nil {
		return fmt.Errorf("building the storage of %s: %w", h.Path, err)
	}
	client, err := h.Client(ctx)
	if err != nil {
		return err
	}
	prefix, err := h.KeyPrefix("")
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.current, m.resourceDone, m.resourceAll = h.Path, 0, int64(len(values))
	m.mu.Unlock()
	work := make(chan chosen)
	var wg sync.WaitGroup
	var mu sync.Mutex
	// A rewrite begun is finished, so that an interrupt leaves each value
	// written or not, and the report says which; each request is bounded
	// by the request timeout still.
	writing := context.WithoutCancel(ctx)
	// etcd out of space refuses every rewrite after the first alike: it
	// is said once, and no more are tried.
	var noSpace atomic.Pointer[error]
	for range writers {
		wg.Go(func() {
			for v := range work {
				outcome, err := m.rewrite(writing, serving, client, prefix, v.key)
				var loss *stores.LossError
				mu.Lock()
				switch {
				case errors.As(err, &loss):
					// Written since it was chosen, by a newer server.
					res.Kept++
					m.report.Kept = append(m.report.Kept, lossFinding(h.Path, v.key, loss))
				case etcdview.NoSpace(err):
					noSpace.CompareAndSwap(nil, &err)
				case err != nil:
					res.Failed++
					m.report.Failed = append(m.report.Failed, Failure{Resource: h.Path, Key: v.key, Error: err.Error()})
				case outcome == rewritten:
					res.Rewritten++
				default:
					res.Current++
				}
				mu.Unlock()
				m.mu.Lock()
				m.done++
				m.resourceDone++
				m.mu.Unlock()
			}
		})
	}
	var stopped error
	for _, v := range values {
		if m.limit != nil {
			if err := m.limit.Wait(ctx); err != nil {
				stopped = err
				break
			}
		}
		if ctx.Err() != nil {
			stopped = context.Cause(ctx)
			break
		}
		if noSpace.Load() != nil {
			break
		}
		work <- v
	}
	close(work)
	wg.Wait()
	if err := noSpace.Load(); err != nil && stopped == nil {
		stopped = &etcdview.SpaceError{Err: *err}
	}
	sort.Slice(m.report.Failed, func(i, j int) bool { return m.report.Failed[i].Key < m.report.Failed[j].Key })
	sort.Slice(m.report.Kept, func(i, j int) bool { return m.report.Kept[i].Key < m.report.Kept[j].Key })
	return stopped
}

type outcome int

const (
	rewritten outcome = iota
	// current: rewritten or deleted since it was chosen.
	current
)

// errAgain marks what a rewrite tries again after: etcd lost its leader
// while the rewrite read or wrote, so its outcome is to be read again.
var errAgain = errors.New("etcd lost its leader")

// rewrite writes the object at key again through its store, unchanged,
// with the resourceVersion it read as precondition. An object written
// since the scan chose it is read again, and rewritten only if it still
// needs it: a write of the server's has rewritten it already, and a
// write of a server on another config has not. A Conflict (another writer
// came first) and a lost leader are tried again, with client-go's backoff.
func (mig *migration) rewrite(ctx context.Context, h *handle.Handle, client *clientv3.Client, prefix, key string) (outcome, error) {
	namespace, name := "", strings.TrimPrefix(key, prefix)
	if h.Resource.Namespaced {
		namespace, name, _ = strings.Cut(name, "/")
	}
	if want, err := h.Key(namespace, name); err != nil || want != key {
		return 0, fmt.Errorf("the key names no object of %s", h.Path)
	}
	t := handle.Target{Handle: h, Namespace: namespace}
	var result outcome
	lost := false
	again := func(err error) bool { return apierrors.IsConflict(err) || errors.Is(err, errAgain) }
	err := retry.OnError(retry.DefaultBackoff, again, func() error {
		obj, err := stores.GetInternal(ctx, t, name)
		if apierrors.IsNotFound(err) {
			result = current
			return nil
		}
		if err != nil && lost && !stores.Unreadable(ctx, err) {
			// Still electing a leader after the one the rewrite went
			// through stopped.
			return fmt.Errorf("%w: reading it: %w", errAgain, err)
		}
		if err != nil {
			return fmt.Errorf("reading it: %w", err)
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return err
		}
		rv, err := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
		if err != nil {
			return fmt.Errorf("reading its resourceVersion: %w", err)
		}
		if rv > mig.report.Revision {
			still, err := mig.stillNeeds(ctx, h, client, key)
			if err != nil || !still {
				result = current
				return err
			}
		}
		// The scan that chose the value checked it for what a rewrite
		// would lose; a value written since is checked as it is written.
		_, err = stores.Update(ctx, t, obj, stores.WriteOptions{Namespaces: mig.namespaces, DropUnknownFields: mig.req.DropUnknownFields, LossCheckedAt: mig.report.Revision})
		if err != nil && !apierrors.IsConflict(err) && stores.OutcomeOf(ctx, err) == stores.Uncertain {
			// Its answer was lost with etcd's leader: read it again, which
			// tells whether it was rewritten (its resourceVersion moved,
			// and it needs no rewrite any more); the precondition keeps
			// a rewrite again from writing over another writer's.
			lost = true
			return fmt.Errorf("%w: %w", errAgain, err)
		}
		if err != nil {
			return err
		}
		result = rewritten
		return nil
	})
	if apierrors.IsConflict(err) {
		return 0, fmt.Errorf("rewriting it: changed by another writer %d times: %w", retry.DefaultBackoff.Steps, err)
	}
	if err != nil {
		return 0, err
	}
	return result, nil
}

// stillNeeds reads the value at key again and tells whether it still
// needs a rewrite.
func (m *migration) stillNeeds(ctx context.Context, h *handle.Handle, client *clientv3.Client, key string) (bool, error) {
	resp, err := client.Get(ctx, key)
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", key, err)
	}
	if len(resp.Kvs) == 0 {
		return false, nil
	}
	found, err := scan.Check(ctx, h, key, resp.Kvs[0].Value, scan.Encryption, scan.Versions)
	if err != nil {
		return false, err
	}
	wanted := reasons(m.req)
	for _, f := range found {
		if slices.Contains(wanted, f.Reason) {
			return true, nil
		}
	}
	return false, nil
}

// storedVersions drops from a custom resource's CRD's
// status.storedVersions the versions no value is stored at any more, as
// the migration runner does once a migration succeeded: the storage
// version is left, read from the CRD with its resourceVersion as
// precondition, so a CRD changed meanwhile is left alone.
func (m *migration) storedVersions(ctx context.Context, r scan.Resource, h, crdStatus *handle.Handle) error {
	// A custom resource's handle defers its serving storage to the CRD
	// handler (Serve); a built-in resource has no CRD.
	if r.Versions == nil || h == nil || h.Serve == nil || crdStatus == nil {
		return nil
	}
	t := handle.Target{Handle: crdStatus}
	// A CRD's name is its plural and group.
	name := h.Route.Resource + "." + h.Resource.Group
	obj, err := stores.GetInternal(ctx, t, name)
	if err != nil {
		return fmt.Errorf("reading customresourcedefinition %s: %w", name, err)
	}
	crd, ok := obj.(*apiextensions.CustomResourceDefinition)
	if !ok {
		return fmt.Errorf("reading customresourcedefinition %s: got a %T", name, obj)
	}
	storage := storageVersion(crd)
	before := crd.Status.StoredVersions
	if slices.Equal(before, []string{storage}) {
		return nil
	}
	change := StoredVersions{CRD: name, Before: before, After: []string{storage}}
	why := m.unfinished(r)
	whole, err := h.KeyPrefix("")
	if err != nil {
		return err
	}
	outside, err := m.outside(ctx, h, whole)
	if err != nil {
		return err
	}
	switch {
	case outside > 0:
		why = fmt.Sprintf("%d of its objects lie outside the namespace migrated: migrate them all (no -n) to drop versions", outside)
	case r.Versions.Writes != crd.Spec.Group+"/"+storage:
		why = fmt.Sprintf("the CRD's storage version is now %s: run the migration again", storage)
	}
	if why != "" {
		change.After, change.Kept = before, why
	}
	m.report.StoredVersions = append(m.report.StoredVersions, change)
	if why != "" || m.req.DryRun {
		return nil
	}
	crd.Status.StoredVersions = change.After
	if _, err := stores.Update(ctx, t, crd, stores.WriteOptions{}); err != nil {
		if apierrors.IsConflict(err) {
			last := &m.report.StoredVersions[len(m.report.StoredVersions)-1]
			last.After, last.Kept = before, "the CRD changed while its objects were rewritten: run the migration again"
			return nil
		}
		return fmt.Errorf("writing the status of customresourcedefinition %s: %w", name, err)
	}
	return nil
}

// outside counts the objects under whole, a resource's key prefix, that
// lie outside the prefixes migrated, as they were when the values were
// chosen: their versions were not read. Objects written since are at the
// storage version (or the CRD changed, which is checked apart).
func (m *migration) outside(ctx context.Context, h *handle.Handle, whole string) (int64, error) {
	if len(m.req.Prefixes) == 0 || slices.Contains(m.req.Prefixes, whole) {
		return 0, nil
	}
	c, err := h.Client(ctx)
	if err != nil {
		return 0, err
	}
	// The revision the values were chosen at is the main etcd's.
	rev := m.report.Revision
	if len(h.Route.EtcdServers) > 0 {
		rev = 0
	}
	all, _, err := etcdview.CountAt(ctx, c, whole, rev)
	if err != nil {
		return 0, err
	}
	for _, p := range m.req.Prefixes {
		if !strings.HasPrefix(p, whole) {
			continue
		}
		n, _, err := etcdview.CountAt(ctx, c, p, rev)
		if err != nil {
			return 0, err
		}
		all -= n
	}
	return all, nil
}

// unfinished says why a resource's values may still be stored at another
// version than storage once the migration is done: one it could not read,
// did not choose (outside the resources and namespace it migrates) or did
// not rewrite. Empty when none is.
func (m *migration) unfinished(r scan.Resource) string {
	for _, f := range m.report.Unreadable {
		if f.Resource == r.Resource {
			return "some of its objects cannot be read"
		}
	}
	var old int64
	for version, n := range r.Versions.Counts {
		if version != r.Versions.Writes {
			old += n
		}
	}
	var res Resource
	for _, each := range m.report.Resources {
		if each.Resource == r.Resource {
			res = each
		}
	}
	switch {
	case res.Reasons[scan.ReasonOldVersion] < old:
		return "some of its objects are still stored at another version"
	case res.Failed > 0:
		return "some of its objects were not rewritten"
	}
	return ""
}

// storageVersion is the CRD's version marked storage.
func storageVersion(crd *apiextensions.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

// showProgress calls req.Progress until the returned stop.
func (m *migration) showProgress() (stop func()) {
	if m.req.Progress == nil || m.req.DryRun {
		return func() {}
	}
	return render.Ticking(func(elapsed time.Duration) {
		m.mu.Lock()
		p := Progress{Resource: m.current, ResourceDone: m.resourceDone, ResourceAll: m.resourceAll, Done: m.done, Total: m.total, Elapsed: elapsed}
		m.mu.Unlock()
		m.req.Progress(p)
	})
}
