// Package stores reads and writes objects through the stores of the
// instantiated storage map: the same Get, List, key functions, predicates,
// strategies and table convertors that kube-apiserver runs.
package stores

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/warning"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storedvalue"
)

// Identity is who regctl reads and writes as: a member of system:masters,
// which is what access to etcd amounts to. Stores that check the requester
// (RBAC's escalation check, admission policies' param authorization) see
// it, and the map's authorizer allows it.
var Identity = &user.DefaultInfo{Name: "regctl", Groups: []string{user.SystemPrivilegedGroup, user.AllAuthenticated}}

// RequestContext carries what a request to the apiserver would: the
// namespace, the user, and request info naming the resource, which stores
// use in their errors and validation (since Kubernetes 1.37, a store's
// declarative validation requires it). The warnings the server adds to every request to the path are
// added to the context's warning recorder, if it has one, as the server's
// handler adds them before calling the store; the store and its strategy
// add theirs (WarningsOnCreate, WarningsOnUpdate) to the same recorder.
func RequestContext(ctx context.Context, t handle.Target) context.Context {
	for _, w := range t.Warnings {
		warning.AddWarning(ctx, "", w)
	}
	ctx = genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{
		IsResourceRequest: true,
		APIGroup:          t.Route.Group,
		APIVersion:        t.Route.Version,
		Namespace:         t.Namespace,
		Resource:          t.Route.Resource,
		Subresource:       t.Route.Subresource,
	})
	ctx = genericapirequest.WithUser(ctx, Identity)
	return genericapirequest.WithNamespace(ctx, t.Namespace)
}

// Get reads one object through the target's store and returns it in the
// served external version, as the apiserver's GET would.
func Get(ctx context.Context, t handle.Target, name string) (runtime.Object, error) {
	obj, err := GetInternal(ctx, t, name)
	if err != nil {
		return nil, err
	}
	return ToExternal(t, obj)
}

// ToExternal converts an object from the version the target's store holds
// it in to the served version, with apiVersion and kind set, with the
// path's own convertor.
func ToExternal(t handle.Target, obj runtime.Object) (runtime.Object, error) {
	gv := t.GroupVersion()
	out, err := t.Codec.Convertor.ConvertToVersion(obj, gv)
	if err != nil {
		return nil, fmt.Errorf("converting to %s: %w", gv, err)
	}
	return out, nil
}

// ListOptions select and page a list.
type ListOptions struct {
	LabelSelector string
	FieldSelector string
	// ChunkSize is the page size; each page is one range request to etcd.
	ChunkSize int64
	// Revision reads the list as it was at this etcd revision; 0 reads it
	// now.
	Revision int64
	// OnError is told about each object that cannot be read (undecodable,
	// encrypted with an unknown key); the others are still listed.
	OnError func(key string, err error)

	// workers decode pages side by side; 0 is one per core.
	workers int
}

// Page is one page of a list, in the store's internal version.
type Page struct {
	List  runtime.Object
	Items []runtime.Object
}

// List pages through the target's objects as the store's List does, with
// its predicates, handing each page to fn: from bounded windows of etcd,
// decoded side by side while fn works on the pages before (readList), so a
// few pages are held at a time and each costs etcd its own keys. A list
// that names one object (a metadata.name field selector), and a path that
// lists without a store of its own, are the store's List itself.
func List(ctx context.Context, t handle.Target, opts ListOptions, fn func(Page) error) error {
	lister, ok := t.Storage.(rest.Lister)
	if !ok {
		return fmt.Errorf("%s cannot be listed", t.Path)
	}
	lo, err := InternalListOptions(t, opts)
	if err != nil {
		return err
	}
	ctx = RequestContext(ctx, t)
	if t.Store == nil {
		return listThroughStore(ctx, t, lister, lo, opts, fn)
	}
	if pred := t.Store.PredicateFunc(lo.LabelSelector, lo.FieldSelector); oneName(&pred) {
		return listThroughStore(ctx, t, lister, lo, opts, fn)
	}
	return readList(ctx, t, lo, opts, fn)
}

// oneName tells whether a list's predicate names one object.
func oneName(pred *storage.SelectionPredicate) bool {
	_, ok := pred.MatchesSingle()
	return ok
}

// listThroughStore is one List of the store: the store reads a named
// object's key alone. A value it cannot read is reported when opts say
// where.
func listThroughStore(ctx context.Context, t handle.Target, lister rest.Lister, lo *metainternalversion.ListOptions, opts ListOptions, fn func(Page) error) (err error) {
	defer func() {
		// A panic in the server's code here would end the process with
		// a trace; it becomes the list's error instead.
		if r := recover(); r != nil {
			err = fmt.Errorf("regctl bug: %v", r)
		}
	}()
	lo.Limit = 0
	list, err := lister.List(ctx, lo)
	if unreadable(ctx, err) && opts.OnError != nil && t.Store != nil {
		pred := t.Store.PredicateFunc(lo.LabelSelector, lo.FieldSelector)
		name, _ := pred.MatchesSingle()
		err := explainAt(ctx, t, name, opts.Revision, err)
		var missing *storedvalue.KeyError
		if errors.As(err, &missing) {
			return err
		}
		key, _ := t.Key(t.Namespace, name)
		opts.OnError(key, err)
		return &UnreadableError{Count: 1, Path: t.Path}
	}
	if err != nil {
		return fmt.Errorf("listing %s: %w", t.Path, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return fmt.Errorf("listing %s: %w", t.Path, err)
	}
	return fn(Page{List: list, Items: items})
}

// ListItemToExternal converts an item of a listed page, which nothing else
// uses, to the served version without the deep copy ToExternal makes: the
// result may share memory with the item.
func ListItemToExternal(t handle.Target, item runtime.Object) (runtime.Object, error) {
	gv := t.GroupVersion()
	out, err := t.Codec.UnsafeConvertor.ConvertToVersion(item, gv)
	if err != nil {
		return nil, fmt.Errorf("converting to %s: %w", gv, err)
	}
	return out, nil
}

// Unreadable tells a failure to read a stored value (a decoding or
// decryption error) from one that says nothing about the value: an API
// error about the request, an etcd that did not answer, a cancelled
// command.
func Unreadable(ctx context.Context, err error) bool { return unreadable(ctx, err) }

// unreadable tells a failure to read stored values (a decoding or decryption
// error, surfacing raw or as an internal error) from API errors about the
// request itself, and from etcd failing to answer: a timeout, a cancelled
// command or an unavailable etcd says nothing about the data.
func unreadable(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil || unanswered(err) {
		return false
	}
	var status apierrors.APIStatus
	// Since Kubernetes 1.37 a list says StoreReadError of the values it
	// could not read; before, it passed the storage's error on as it was.
	return !errors.As(err, &status) || apierrors.IsInternalError(err) || apierrors.ReasonForError(err) == metav1.StatusReasonStoreReadError
}

// unanswered is an error of etcd or of the way to it, not of a value.
func unanswered(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) {
		return true
	}
	code := codes.OK
	var grpcErr interface{ GRPCStatus() *grpcstatus.Status }
	// The etcd client hands etcd's own errors on as rpctypes.EtcdError
	// ("etcdserver: server stopped", "leader changed"), with their code.
	var etcdErr interface{ Code() codes.Code }
	switch {
	case errors.As(err, &grpcErr):
		code = grpcErr.GRPCStatus().Code()
	case errors.As(err, &etcdErr):
		code = etcdErr.Code()
	}
	switch code {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled, codes.ResourceExhausted, codes.Aborted:
		return true
	}
	// A member whose raft node stopped under the request.
	return strings.Contains(err.Error(), "raft: stopped")
}

// InternalListOptions parses selectors the way the apiserver's list handler does,
// converting field labels through the scheme so that unsupported ones are
// refused with the server's own message.
func InternalListOptions(t handle.Target, opts ListOptions) (*metainternalversion.ListOptions, error) {
	lo := &metainternalversion.ListOptions{Limit: opts.ChunkSize}
	if opts.Revision > 0 {
		// The store reads etcd at exactly this revision, as the
		// apiserver does for resourceVersionMatch=Exact.
		lo.ResourceVersion = strconv.FormatInt(opts.Revision, 10)
		lo.ResourceVersionMatch = metav1.ResourceVersionMatchExact
	}
	var err error
	if lo.LabelSelector, err = labels.Parse(opts.LabelSelector); err != nil {
		return nil, fmt.Errorf("parsing `--selector`: %w", err)
	}
	fs, err := fields.ParseSelector(opts.FieldSelector)
	if err != nil {
		return nil, fmt.Errorf("parsing `--field-selector`: %w", err)
	}
	gvk := t.GroupVersion().WithKind(t.Resource.Kind)
	if lo.FieldSelector, err = fs.Transform(func(label, value string) (string, string, error) {
		return t.Codec.Convertor.ConvertFieldLabel(gvk, label, value)
	}); err != nil {
		return nil, fmt.Errorf("reading `--field-selector`: %w", err)
	}
	return lo, nil
}

// Table converts objects with the store's TableConvertor: the server-side
// printers kubectl shows.
func Table(ctx context.Context, t handle.Target, obj runtime.Object) (*metav1.Table, error) {
	conv, ok := t.Storage.(rest.TableConvertor)
	if !ok {
		return nil, fmt.Errorf("%s has no table printer", t.Path)
	}
	table, err := conv.ConvertToTable(RequestContext(ctx, t), obj, &metav1.TableOptions{})
	if err != nil {
		return nil, fmt.Errorf("printing %s: %w", t.Path, err)
	}
	return table, nil
}

// ResourceVersion is the revision the page's list was read at, where a
// watch continues it; empty when the page does not say (pages read key by
// key around an unreadable value).
func (p Page) ResourceVersion() string {
	if p.List == nil {
		return ""
	}
	lm, err := meta.ListAccessor(p.List)
	if err != nil {
		return ""
	}
	return lm.GetResourceVersion()
}
