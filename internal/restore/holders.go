package restore

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/networking"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/stores"
)

// nodePortField is the field of a taken node port in the service store's
// error: spec.ports[N].nodePort.
var nodePortField = regexp.MustCompile(`^spec\.ports\[(\d+)\]\.nodePort$`)

// heldBy names what holds the cluster IPs and node ports a service's
// create found taken (the service store's Invalid error): "10.0.0.12 is
// held by service other/thief". Empty when err says nothing of them, or
// when what holds them cannot be read.
func (r *restorer) heldBy(ctx context.Context, svc *api.Service, err error) string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || !apierrors.IsInvalid(err) || status.Status().Details == nil {
		return ""
	}
	var ips []string
	var ports []int32
	for _, c := range status.Status().Details.Causes {
		if !strings.Contains(c.Message, "already allocated") {
			continue
		}
		switch m := nodePortField.FindStringSubmatch(c.Field); {
		case strings.HasPrefix(c.Field, "spec.clusterIP"):
			ips = append(ips, svc.Spec.ClusterIPs...)
		case m != nil:
			if i, _ := strconv.Atoi(m[1]); i < len(svc.Spec.Ports) {
				ports = append(ports, svc.Spec.Ports[i].NodePort)
			}
		case c.Field == "spec.healthCheckNodePort":
			ports = append(ports, svc.Spec.HealthCheckNodePort)
		}
	}
	var said []string
	for _, ip := range slices.Compact(ips) {
		if holder := r.ipHolder(ctx, ip); holder != "" {
			said = append(said, fmt.Sprintf("%s is held by %s", ip, holder))
		}
	}
	for _, port := range ports {
		if holder := r.nodePortHolder(ctx, port); holder != "" {
			said = append(said, fmt.Sprintf("node port %d is held by %s", port, holder))
		}
	}
	return strings.Join(said, ", ")
}

// ipHolder is the object a cluster IP's IPAddress names as its parent.
func (r *restorer) ipHolder(ctx context.Context, ip string) string {
	if r.req.IPAddresses == nil {
		return ""
	}
	obj, err := stores.GetInternal(ctx, handle.Target{Handle: r.req.IPAddresses}, ip)
	if err != nil {
		return ""
	}
	addr, ok := obj.(*networking.IPAddress)
	if !ok || addr.Spec.ParentRef == nil {
		return ""
	}
	p := addr.Spec.ParentRef
	kind := strings.TrimSuffix(p.Resource, "s")
	if p.Group != "" {
		kind += "." + p.Group
	}
	return kind + " " + namespaced(p.Namespace, p.Name)
}

// nodePortHolder is the service that holds a node port: no object records
// node ports but the services themselves.
func (r *restorer) nodePortHolder(ctx context.Context, port int32) string {
	if r.req.Services == nil {
		return ""
	}
	holder := ""
	_ = stores.List(ctx, handle.Target{Handle: r.req.Services}, stores.ListOptions{ChunkSize: 500}, func(p stores.Page) error {
		for _, item := range p.Items {
			svc, ok := item.(*api.Service)
			if !ok {
				continue
			}
			if svc.Spec.HealthCheckNodePort == port || slices.ContainsFunc(svc.Spec.Ports, func(sp api.ServicePort) bool { return sp.NodePort == port }) {
				holder = "service " + namespaced(svc.Namespace, svc.Name)
				return errFound
			}
		}
		return nil
	})
	return holder
}

var errFound = errors.New("found")

func namespaced(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
