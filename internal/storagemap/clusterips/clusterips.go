// Package clusterips readies kube-apiserver's cluster IP allocator for a
// write that allocates or releases a Service's cluster IPs, without
// starting anything on a read.
package clusterips

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	api "k8s.io/kubernetes/pkg/apis/core"
	cpoptions "k8s.io/kubernetes/pkg/controlplane/apiserver/options"
	netutils "k8s.io/utils/net"
)

// Allocator readies the server's cluster IP allocator for regctl's writes.
// Since Kubernetes 1.33 the service store allocates cluster IPs with the
// MetaAllocator, which keeps one allocator per ServiceCIDR object, learned
// from an informer, and knows the IPs taken from an IPAddress informer; it
// creates and deletes IPAddress objects through the loopback client. A
// server starts those informers at start-up. regctl starts them (and only
// them) the first time a write allocates or releases a cluster IP, so that
// reads never list or watch anything.
type Allocator struct {
	serviceCIDRs cache.SharedIndexInformer
	ipAddresses  cache.SharedIndexInformer
	// family is the primary IP family of --service-cluster-ip-range, the
	// family of the service store's primary MetaAllocator.
	family api.IPFamily
	// dualStack is set when --service-cluster-ip-range has a second range.
	dualStack bool
	// store is the services store, whose own allocation, run dry, tells
	// when the MetaAllocator has an allocator ready.
	store   *genericregistry.Store
	timeout time.Duration

	mu      sync.Mutex
	stop    chan struct{}
	running sync.WaitGroup
	ready   bool
	// err is a wait that ended without the allocator ready.
	err error
}

// New is the allocator of the flag --service-cluster-ip-range, with the
// informers of factory.
func New(factory informers.SharedInformerFactory, serviceCIDR string, timeout time.Duration) (*Allocator, error) {
	primary, secondary, err := ServiceIPRanges(serviceCIDR)
	if err != nil {
		return nil, err
	}
	c := &Allocator{
		serviceCIDRs: factory.Networking().V1().ServiceCIDRs().Informer(),
		ipAddresses:  factory.Networking().V1().IPAddresses().Informer(),
		family:       api.IPv4Protocol,
		dualStack:    secondary.IP != nil,
		timeout:      timeout,
	}
	if netutils.IsIPv6CIDR(&primary) {
		c.family = api.IPv6Protocol
	}
	return c, nil
}

// Of is Ready for store, the services store, whose own allocation (run
// dry) tells when the allocator is ready.
func (c *Allocator) Of(store *genericregistry.Store) func(context.Context) error {
	c.store = store
	return c.Ready
}

// Started tells whether Ready started the informers: a read never does.
func (c *Allocator) Started() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stop != nil
}

// Ready returns once the service store can allocate a cluster IP: the
// ServiceCIDR and IPAddress informers are started and synced, and the
// MetaAllocator has a ready allocator. It fails, within the request timeout,
// when etcd holds no ServiceCIDR to allocate from.
func (c *Allocator) Ready(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.ready:
		return nil
	case c.err != nil:
		// Each service of a manifest would wait as long again.
		return c.err
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	c.start()
	if !cache.WaitForCacheSync(ctx.Done(), c.serviceCIDRs.HasSynced, c.ipAddresses.HasSynced) {
		c.err = fmt.Errorf("the ServiceCIDR and IPAddress objects could not be read within %s: %w", c.timeout, context.Cause(ctx))
		return c.err
	}
	if err := c.checkServiceCIDRs(); err != nil {
		return err
	}
	// The MetaAllocator learns the ServiceCIDRs from its own handler on the
	// informer, some time after the sync: wait until its allocation works.
	var last error
	err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		last = c.probe(ctx)
		// Internal errors (the range is full) are answers, not states to
		// wait out: the write itself says them.
		return last == nil || apierrors.IsInternalError(last), nil
	})
	if err != nil {
		c.err = fmt.Errorf("the cluster IP allocator was not ready within %s: %s", c.timeout, causeOf(last, err))
		return c.err
	}
	c.ready = true
	return nil
}

// causeOf is what the probe's allocation last said, without the probe's
// made-up service, or else why the wait ended.
func causeOf(probe, wait error) string {
	var status apierrors.APIStatus
	if errors.As(probe, &status) {
		if d := status.Status().Details; d != nil && len(d.Causes) > 0 {
			return d.Causes[0].Message
		}
	}
	if probe != nil {
		return probe.Error()
	}
	return wait.Error()
}

// start runs the two informers until the map is closed.
func (c *Allocator) start() {
	if c.stop != nil {
		return
	}
	c.stop = make(chan struct{})
	for _, inf := range []cache.SharedIndexInformer{c.serviceCIDRs, c.ipAddresses} {
		c.running.Add(1)
		go func() {
			defer c.running.Done()
			inf.Run(c.stop)
		}()
	}
}

// Stop stops the informers, if started, and waits for them.
func (c *Allocator) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stop != nil {
		close(c.stop)
		c.running.Wait()
	}
}

// checkServiceCIDRs says plainly what the MetaAllocator would only report
// as "not ready": that no ServiceCIDR in etcd can give out addresses of the
// family regctl allocates.
func (c *Allocator) checkServiceCIDRs() error {
	usable := map[api.IPFamily]bool{}
	unready := map[api.IPFamily][]string{}
	for _, obj := range c.serviceCIDRs.GetStore().List() {
		sc, ok := obj.(*networkingv1.ServiceCIDR)
		if !ok {
			continue
		}
		for _, cidr := range sc.Spec.CIDRs {
			f := familyOfCIDR(cidr)
			if serviceCIDRReady(sc) {
				usable[f] = true
			} else if !slices.Contains(unready[f], sc.Name) {
				unready[f] = append(unready[f], sc.Name)
			}
		}
	}
	families := []api.IPFamily{c.family}
	if c.dualStack {
		families = append(families, otherFamily(c.family))
	}
	for _, f := range families {
		switch {
		case usable[f]:
		case len(unready[f]) > 0:
			// The informer lists in no particular order; the message is
			// the same every time.
			slices.Sort(unready[f])
			return fmt.Errorf("no ready %s ServiceCIDR in etcd: %s not ready or being deleted", f, strings.Join(unready[f], ", "))
		case usable[otherFamily(f)]:
			return fmt.Errorf("no %s ServiceCIDR in etcd, only %s ones: pass the apiserver's `--service-cluster-ip-range`", f, otherFamily(f))
		default:
			return fmt.Errorf("no %s ServiceCIDR in etcd: the service store allocates and releases cluster IPs in ServiceCIDRs, and a running kube-apiserver creates the default one (kubernetes) from its `--service-cluster-ip-range`; start it once on this etcd, or create a networking.k8s.io/v1 ServiceCIDR", f)
		}
	}
	return nil
}

// probe asks the service store to allocate, dry, the cluster IPs of a new
// service: it writes nothing and fails until the MetaAllocator has a ready
// allocator for each family.
func (c *Allocator) probe(ctx context.Context) error {
	policy := api.IPFamilyPolicySingleStack
	if c.dualStack {
		policy = api.IPFamilyPolicyRequireDualStack
	}
	svc := &api.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "regctl-probe", Namespace: metav1.NamespaceDefault},
		Spec: api.ServiceSpec{
			Type:           api.ServiceTypeClusterIP,
			IPFamilyPolicy: &policy,
			Ports:          []api.ServicePort{{Port: 80, Protocol: api.ProtocolTCP}},
		},
	}
	ctx = genericapirequest.WithNamespace(ctx, svc.Namespace)
	finish, err := c.store.BeginCreate(ctx, svc, &metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		return err
	}
	finish(ctx, false)
	return nil
}

func familyOfCIDR(cidr string) api.IPFamily {
	if netutils.IsIPv6CIDRString(cidr) {
		return api.IPv6Protocol
	}
	return api.IPv4Protocol
}

func otherFamily(f api.IPFamily) api.IPFamily {
	if f == api.IPv4Protocol {
		return api.IPv6Protocol
	}
	return api.IPv4Protocol
}

// serviceCIDRReady is the MetaAllocator's own rule: a ServiceCIDR without a
// Ready condition is taken as ready, since no controller may have run.
func serviceCIDRReady(sc *networkingv1.ServiceCIDR) bool {
	if !sc.DeletionTimestamp.IsZero() {
		return false
	}
	for _, cond := range sc.Status.Conditions {
		if cond.Type == networkingv1.ServiceCIDRConditionReady {
			return cond.Status == metav1.ConditionTrue
		}
	}
	return true
}

// ServiceIPRanges reads --service-cluster-ip-range as kube-apiserver does,
// defaulting the primary range through the server's own ServiceIPRange.
func ServiceIPRanges(flag string) (primary, secondary net.IPNet, err error) {
	var cidrs []string
	if flag != "" {
		cidrs = strings.Split(flag, ",")
	}
	var passed net.IPNet
	if len(cidrs) > 0 {
		_, n, err := netutils.ParseCIDRSloppy(cidrs[0])
		if err != nil {
			return primary, secondary, fmt.Errorf("reading `--service-cluster-ip-range`: %q is not a CIDR", cidrs[0])
		}
		passed = *n
	}
	if primary, _, err = cpoptions.ServiceIPRange(passed); err != nil {
		return primary, secondary, fmt.Errorf("reading `--service-cluster-ip-range`: %w", err)
	}
	if len(cidrs) > 1 {
		_, n, err := netutils.ParseCIDRSloppy(cidrs[1])
		if err != nil {
			return primary, secondary, fmt.Errorf("reading `--service-cluster-ip-range`: %q is not a CIDR", cidrs[1])
		}
		secondary = *n
	}
	return primary, secondary, nil
}
