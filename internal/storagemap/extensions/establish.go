package extensions

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	listers "k8s.io/apiextensions-apiserver/pkg/client/listers/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/controller/apiapproval"
	"k8s.io/apiextensions-apiserver/pkg/controller/establish"
	"k8s.io/apiextensions-apiserver/pkg/controller/status"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// Establish does for the CRDs named what a server's apiextensions
// controllers do for a CRD that was created or changed, where none runs (a
// sandbox): the API approval controller says whether a CRD of a protected
// group (*.k8s.io, *.kubernetes.io) carries its approval
// (KubernetesAPIApprovalPolicyConformant), the naming controller accepts
// its names (NamesAccepted) and the establishing controller establishes it
// (Established), so that its custom resources are served. It runs the
// server's own three controllers, writing through the loopback client, on
// an informer that lists and watches the CRD store without their schemas
// (crdListWatch), until each CRD named is established, or its names are
// refused, or a request timeout passes with none newly established: many
// CRDs take as long as they take, a stuck one is said at once. A CRD gone
// in the meantime is passed over. The controllers' sync functions and
// queues are not exported, so they are run whole, on a started informer,
// for the few milliseconds they take.
//
// On a server the three race, and a new CRD of a protected group lists its
// conditions in either order (approval first, or last). Here the approval
// controller runs first, alone, until it has written its condition: a
// sandbox's CRDs come out the same every time, in one of the server's
// orders.
//
// The controllers write through loopback, and read through store, a CRD
// store that decodes CRDs without their schemas (Chain.SchemalessCRDs).
func Establish(ctx context.Context, names []string, loopback *restclient.Config, store *customresourcedefinition.REST, timeout time.Duration) error {
	if len(names) == 0 {
		return nil
	}
	client, err := apiextensionsclient.NewForConfig(loopback)
	if err != nil {
		return err
	}
	// The controllers stop with ctx, and so does the informer, which the
	// deferred wait waits for.
	ctx, cancel := context.WithCancelCause(ctx)
	crds := crdListWatch{store}
	lw := cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{ListWithContextFunc: crds.list, WatchFuncWithContext: crds.watch}, crds)
	informer := crdInformer{cache.NewSharedIndexInformer(lw, &apiextensionsv1.CustomResourceDefinition{}, 0, cache.Indexers{})}
	var running sync.WaitGroup
	defer func() {
		cancel(nil)
		running.Wait()
	}()
	approval := apiapproval.NewKubernetesAPIApprovalPolicyConformantConditionController(informer, client.ApiextensionsV1())
	naming := status.NewNamingConditionController(klog.FromContext(ctx), informer, client.ApiextensionsV1())
	establishing := establish.NewEstablishingController(informer, client.ApiextensionsV1())
	// The server's CRD handler queues a CRD whose names were accepted for
	// the establishing controller (with no delay on a lone server). A CRD
	// accepted by an earlier command that did not get as far is queued
	// when it is first listed.
	queue := func(obj any) {
		if crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition); ok &&
			apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.NamesAccepted) &&
			!apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
			establishing.QueueCRD(crd.Name, 0)
		}
	}
	if _, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    queue,
		UpdateFunc: func(_, obj any) { queue(obj) },
	}); err != nil {
		return err
	}
	running.Go(func() { informer.Informer().RunWithContext(ctx) })
	go approval.RunWithContext(1, ctx)

	lister := informer.Lister()
	var refused error
	namingStarted := false
	progress := newProgress(timeout, func() { cancel(errNoProgress) })
	defer progress.stop()
	err = wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
		if !informer.Informer().HasSynced() {
			return false, nil
		}
		crds, err := present(lister, names)
		if err != nil {
			return false, err
		}
		if !namingStarted {
			if !approvalsWritten(crds) {
				return false, nil
			}
			go naming.RunWithContext(ctx)
			go establishing.RunWithContext(ctx)
			namingStarted = true
		}
		done, established := true, 0
		defer func() { progress.made(established) }()
		for _, crd := range crds {
			if c := apihelpers.FindCRDCondition(crd, apiextensionsv1.NamesAccepted); c != nil && c.Status == apiextensionsv1.ConditionFalse {
				refused = fmt.Errorf("customresourcedefinition %s is not established: its names are not accepted: %s", crd.Name, c.Message)
				return true, nil
			}
			if apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
				established++
			} else {
				done = false
			}
		}
		return done, nil
	})
	switch {
	case refused != nil:
		return refused
	case err != nil:
		// The cause: no progress, or the command's own end (Ctrl-C).
		return notEstablished(lister, names, cmp.Or(context.Cause(ctx), err))
	}
	return nil
}

// present are the CRDs named that are still there, in the informer's
// cache.
func present(lister listers.CustomResourceDefinitionLister, names []string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, name := range names {
		crd, err := lister.Get(name)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, err
		}
		out = append(out, crd)
	}
	return out, nil
}

// approvalsWritten tells whether every CRD of crds in a protected group
// holds the condition the API approval controller writes for it.
func approvalsWritten(crds []*apiextensionsv1.CustomResourceDefinition) bool {
	for _, crd := range crds {
		if apihelpers.IsProtectedCommunityGroup(crd.Spec.Group) && apihelpers.FindCRDCondition(crd, apiextensionsv1.KubernetesAPIApprovalPolicyConformant) == nil {
			return false
		}
	}
	return true
}

// errNoProgress ends establishing when a request timeout passed with no
// CRD newly established.
var errNoProgress = errors.New("no customresourcedefinition was established within the request timeout")

// progress calls expire when timeout passes without a higher count than
// the last; a zero timeout never expires.
type progress struct {
	mu    sync.Mutex
	best  int
	timer *time.Timer
	reset func()
}

func newProgress(timeout time.Duration, expire func()) *progress {
	p := &progress{best: -1, reset: func() {}}
	if timeout > 0 {
		p.timer = time.AfterFunc(timeout, expire)
		p.reset = func() { p.timer.Reset(timeout) }
	}
	return p
}

func (p *progress) made(count int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if count > p.best {
		p.best = count
		p.reset()
	}
}

func (p *progress) stop() {
	if p.timer != nil {
		p.timer.Stop()
	}
}

// notEstablished says which CRD the controllers left unestablished, and
// why when they said (its Established condition: an invalid CA bundle of
// its conversion webhook), after err ended the wait.
func notEstablished(lister listers.CustomResourceDefinitionLister, names []string, err error) error {
	for _, name := range names {
		crd, getErr := lister.Get(name)
		if getErr != nil || apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
			continue
		}
		if c := apihelpers.FindCRDCondition(crd, apiextensionsv1.Established); c != nil && c.Message != "" {
			return fmt.Errorf("customresourcedefinition %s is not established (%s): %w", name, c.Message, err)
		}
		return fmt.Errorf("customresourcedefinition %s is not established: %w", name, err)
	}
	return fmt.Errorf("establishing customresourcedefinitions %s: %w", strings.Join(names, ", "), err)
}

// crdInformer is the CRD informer the apiextensions controllers take, on
// an informer of regctl's.
type crdInformer struct{ informer cache.SharedIndexInformer }

func (i crdInformer) Informer() cache.SharedIndexInformer { return i.informer }

func (i crdInformer) Lister() listers.CustomResourceDefinitionLister {
	return listers.NewCustomResourceDefinitionLister(i.informer.GetIndexer())
}

// crdListWatch lists and watches the CRDs, in v1, through a CRD store that
// decodes them without their schemas: the controllers read names and
// conditions, and write status, which the server writes over the spec it
// holds. A server's controllers read the same CRDs through its loopback
// client, schemas and all, for every CRD and every write.
type crdListWatch struct {
	store *customresourcedefinition.REST
}

func (lw crdListWatch) list(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	internalOpts, err := internalListOptions(opts)
	if err != nil {
		return nil, err
	}
	list, err := lw.store.List(genericapirequest.WithNamespace(ctx, ""), internalOpts)
	if err != nil {
		return nil, err
	}
	out := &apiextensionsv1.CustomResourceDefinitionList{}
	return out, apiextensionsapiserver.Scheme.Convert(list, out, nil)
}

func (lw crdListWatch) watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	internalOpts, err := internalListOptions(opts)
	if err != nil {
		return nil, err
	}
	w, err := lw.store.Watch(genericapirequest.WithNamespace(ctx, ""), internalOpts)
	if err != nil {
		return nil, err
	}
	return watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
		if internal, ok := e.Object.(*apiextensions.CustomResourceDefinition); ok {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := apiextensionsapiserver.Scheme.Convert(internal, crd, nil); err != nil {
				return watch.Event{Type: watch.Error, Object: &apierrors.NewInternalError(err).ErrStatus}, true
			}
			e.Object = crd
		}
		return e, true
	}), nil
}

// IsWatchListSemanticsUnSupported tells the reflector to list, then watch:
// the store has no watch cache to stream the initial list from.
func (crdListWatch) IsWatchListSemanticsUnSupported() bool { return true }

func internalListOptions(opts metav1.ListOptions) (*metainternalversion.ListOptions, error) {
	out := &metainternalversion.ListOptions{}
	if err := metainternalversion.Convert_v1_ListOptions_To_internalversion_ListOptions(&opts, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}
