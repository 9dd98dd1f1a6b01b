package clusterips

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	cpoptions "k8s.io/kubernetes/pkg/controlplane/apiserver/options"
)

// unstarted is the allocator of flag on informers that are never started:
// their stores hold what a test puts in them, as a synced informer's would.
func unstarted(t *testing.T, flag string, cidrs ...*networkingv1.ServiceCIDR) *Allocator {
	t.Helper()
	client, err := kubernetes.NewForConfig(&restclient.Config{Host: "https://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(informers.NewSharedInformerFactory(client, 0), flag, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cidrs {
		if err := a.serviceCIDRs.GetStore().Add(c); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

func serviceCIDR(name string, ready metav1.ConditionStatus, cidrs ...string) *networkingv1.ServiceCIDR {
	sc := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}
	if ready != "" {
		sc.Status.Conditions = []metav1.Condition{{Type: networkingv1.ServiceCIDRConditionReady, Status: ready}}
	}
	return sc
}

// TestServiceCIDRsAreCheckedAsTheMetaAllocatorWould: a ServiceCIDR with no
// Ready condition is ready, one not ready or being deleted is named, a
// family with none says which flag or object is missing, on one line.
func TestServiceCIDRsAreCheckedAsTheMetaAllocatorWould(t *testing.T) {
	deleting := serviceCIDR("old", metav1.ConditionTrue, "10.0.0.0/24")
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	const dual = "10.0.0.0/24,fd00::/108"
	for _, c := range []struct {
		name, flag string
		cidrs      []*networkingv1.ServiceCIDR
		want       string
	}{
		{"none", "", nil, "no IPv4 ServiceCIDR in etcd: the service store allocates and releases cluster IPs in ServiceCIDRs, and a running kube-apiserver creates the default one (kubernetes) from its `--service-cluster-ip-range`; start it once on this etcd, or create a networking.k8s.io/v1 ServiceCIDR"},
		{"no condition", "", []*networkingv1.ServiceCIDR{serviceCIDR("kubernetes", "", "10.0.0.0/24")}, ""},
		{"not ready", "", []*networkingv1.ServiceCIDR{serviceCIDR("a", metav1.ConditionFalse, "10.0.0.0/24"), deleting}, "no ready IPv4 ServiceCIDR in etcd: a, old not ready or being deleted"},
		{"one of two ready", "", []*networkingv1.ServiceCIDR{serviceCIDR("a", metav1.ConditionFalse, "10.0.0.0/24"), serviceCIDR("b", metav1.ConditionTrue, "10.1.0.0/24")}, ""},
		{"other family", "fd00::/108", []*networkingv1.ServiceCIDR{serviceCIDR("kubernetes", "", "10.0.0.0/24")}, "no IPv6 ServiceCIDR in etcd, only IPv4 ones: pass the apiserver's `--service-cluster-ip-range`"},
		{"dual stack, one family", dual, []*networkingv1.ServiceCIDR{serviceCIDR("kubernetes", "", "10.0.0.0/24")}, "no IPv6 ServiceCIDR in etcd, only IPv4 ones: pass the apiserver's `--service-cluster-ip-range`"},
		{"dual stack", dual, []*networkingv1.ServiceCIDR{serviceCIDR("kubernetes", "", "10.0.0.0/24", "fd00::/108")}, ""},
	} {
		err := unstarted(t, c.flag, c.cidrs...).checkServiceCIDRs()
		if got := errorText(err); got != c.want {
			t.Errorf("%s: %q\nwant %q", c.name, got, c.want)
		}
	}
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestTheRangesAreReadAsTheServerReadsThem: no flag is the server's
// default range; a second range makes the allocator dual-stack, in the
// family of the first; what is not a CIDR, or what the server refuses, is
// said with the flag's name.
func TestTheRangesAreReadAsTheServerReadsThem(t *testing.T) {
	primary, secondary, err := ServiceIPRanges("")
	want, _, _ := cpoptions.ServiceIPRange(net.IPNet{})
	if err != nil || primary.String() != want.String() || secondary.IP != nil {
		t.Errorf("no flag: %s, %v (%v), want the server's default %s alone", primary.String(), secondary.IP, err, want.String())
	}
	if a := unstarted(t, "fd00::/108,10.0.0.0/16"); a.family != "IPv6" || !a.dualStack {
		t.Errorf("fd00::/108,10.0.0.0/16: family %s, dual-stack %v", a.family, a.dualStack)
	}
	if a := unstarted(t, "10.0.0.0/16"); a.family != "IPv4" || a.dualStack {
		t.Errorf("10.0.0.0/16: family %s, dual-stack %v", a.family, a.dualStack)
	}
	for flag, want := range map[string]string{
		"nonsense":        "reading `--service-cluster-ip-range`: \"nonsense\" is not a CIDR",
		"10.0.0.0/24,bad": "reading `--service-cluster-ip-range`: \"bad\" is not a CIDR",
		"10.0.0.0/30":     "reading `--service-cluster-ip-range`: the service cluster IP range must be at least 8 IP addresses",
	} {
		if _, _, err := ServiceIPRanges(flag); errorText(err) != want {
			t.Errorf("%s: %v, want %s", flag, err, want)
		}
	}
}

// TestTheCauseIsTheAllocationsOwnWords: the probe's made-up service is
// left out of what a failed wait says.
func TestTheCauseIsTheAllocationsOwnWords(t *testing.T) {
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, "regctl-probe", nil)
	invalid.ErrStatus.Details.Causes = []metav1.StatusCause{{Message: "failed to allocate a serviceIP: range is full"}}
	timedOut := errors.New("context deadline exceeded")
	for _, c := range []struct {
		probe error
		want  string
	}{
		{invalid, "failed to allocate a serviceIP: range is full"},
		{errors.New("etcd is down"), "etcd is down"},
		{nil, "context deadline exceeded"},
	} {
		if got := causeOf(c.probe, timedOut); got != c.want || strings.Contains(got, "regctl-probe") {
			t.Errorf("probe %v: %q, want %q", c.probe, got, c.want)
		}
	}
}
