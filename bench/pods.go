package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/etcdview/embedded"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
)

// benchNamespaces are where the pods go, round robin.
var benchNamespaces = []string{
	"shop", "payments", "search", "checkout", "accounts",
	"catalog", "shipping", "notifications", "analytics", "platform",
}

// seedPods writes n running pods, spread over benchNamespaces, into the etcd
// at etcdURL through kube-apiserver's namespace and pod stores, as
// regctl's tests create theirs: each pod is created, then its status written
// through pods/status as a kubelet would, so that it is stored as the server
// stores a scheduled, running pod.
func seedPods(ctx context.Context, etcdURL string, n int) error {
	w, err := openSession(ctx, etcdURL)
	if err != nil {
		return err
	}
	defer w.Close()

	if err := seedNamespaces(w); err != nil {
		return err
	}

	creater := w.Map.Handles["pods"].Storage.(rest.Creater)
	statusUpdater := w.Map.Handles["pods/status"].Storage.(rest.Updater)
	return inParallel(8, 0, n, 1, func(i int) error { return seedPod(creater, statusUpdater, i) })
}

// openSession builds regctl's map of kube-apiserver's stores on the etcd at
// etcdURL, to write through them.
func openSession(ctx context.Context, etcdURL string) (*storagemap.Session, error) {
	opts := serverflags.NewOptions()
	fs := pflag.NewFlagSet("seed", pflag.ContinueOnError)
	opts.AddFlags(fs)
	if err := fs.Parse([]string{"--etcd-servers=" + etcdURL}); err != nil {
		return nil, err
	}
	return storagemap.Open(ctx, storagemap.Config{Options: opts, Timeout: 30 * time.Second})
}

// seedNamespaces creates benchNamespaces through the namespace store.
func seedNamespaces(w *storagemap.Session) error {
	nsCreater := w.Map.Handles["namespaces"].Storage.(rest.Creater)
	for _, ns := range benchNamespaces {
		obj := &api.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"kubernetes.io/metadata.name": ns}}}
		ctx := inNamespace(context.Background(), "namespaces", metav1.NamespaceNone)
		if _, err := nsCreater.Create(ctx, obj, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
	}
	return nil
}

func seedPod(creater rest.Creater, statusUpdater rest.Updater, i int) error {
	spec, status := benchPod(i)
	created, err := creater.Create(inNamespace(context.Background(), "pods", spec.Namespace), spec, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating pod %s/%s: %w", spec.Namespace, spec.Name, err)
	}
	running := created.(*api.Pod)
	running.Status = status.Status
	_, _, err = statusUpdater.Update(inNamespace(context.Background(), "pods/status", spec.Namespace), running.Name, rest.DefaultUpdatedObjectInfo(running),
		rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("writing the status of pod %s/%s: %w", spec.Namespace, spec.Name, err)
	}
	return nil
}

// benchPod returns pod i as a Deployment's ReplicaSet would create it (two
// containers, probes, resources, the projected service account volume
// admission adds), defaulted as the apiserver defaults what it decodes, and
// separately the same pod with the status a kubelet reports once it runs.
func benchPod(i int) (spec, status *api.Pod) {
	ns := benchNamespaces[i%len(benchNamespaces)]
	app := fmt.Sprintf("svc-%02d", i/len(benchNamespaces)%50)
	hash := fmt.Sprintf("%010x", 0x5d8f7c9b6a+i%50)
	name := fmt.Sprintf("%s-%s-%05d", app, hash, i)
	node := fmt.Sprintf("node-%03d", i%200)
	ip := fmt.Sprintf("10.%d.%d.%d", 64+i/65536, i/256%256, i%256)
	hostIP := fmt.Sprintf("192.168.0.%d", 10+i%200)
	started := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	tokenExpiry := int64(3607)
	defaultMode := int32(0o644)
	tru := true

	p := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name:         name,
			GenerateName: app + "-" + hash + "-",
			Namespace:    ns,
			Labels: map[string]string{
				"app.kubernetes.io/name":    app,
				"app.kubernetes.io/part-of": ns,
				"pod-template-hash":         hash,
				"tier":                      []string{"frontend", "backend", "worker"}[i%3],
			},
			Annotations: map[string]string{
				"prometheus.io/scrape":              "true",
				"prometheus.io/port":                "9090",
				"kubectl.kubernetes.io/restartedAt": "2026-01-02T03:00:00Z",
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app + "-" + hash,
				UID: types.UID(fmt.Sprintf("00000000-0000-4000-9000-%012d", i%500)), Controller: &tru, BlockOwnerDeletion: &tru,
			}},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{
				{
					Name:  "app",
					Image: fmt.Sprintf("registry.example.com/%s/%s:1.%d.3", ns, app, i%20),
					Args:  []string{"--listen=:8080", "--metrics=:9090", "--log-format=json"},
					Ports: []corev1.ContainerPort{
						{Name: "http", ContainerPort: 8080},
						{Name: "metrics", ContainerPort: 9090},
					},
					Env: []corev1.EnvVar{
						{Name: "LOG_LEVEL", Value: "info"},
						{Name: "DATABASE_HOST", Value: "db." + ns + ".svc.cluster.local"},
						{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
						{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
					},
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
						Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
					},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("http")}}, PeriodSeconds: 5},
					LivenessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}}, InitialDelaySeconds: 10},
					VolumeMounts: []corev1.VolumeMount{
						{Name: "config", MountPath: "/etc/app", ReadOnly: true},
						{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true},
					},
				},
				{
					Name:  "log-shipper",
					Image: "registry.example.com/platform/fluent-bit:3.2.4",
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
						Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
					},
					VolumeMounts: []corev1.VolumeMount{
						{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true},
					},
				},
			},
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: app + "-config"}}}},
				{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
					DefaultMode: &defaultMode,
					Sources: []corev1.VolumeProjection{
						{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &tokenExpiry}},
						{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
						{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
					},
				}}},
			},
			ServiceAccountName: "default",
			NodeName:           node,
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))},
			},
		},
	}
	legacyscheme.Scheme.Default(p)
	spec = &api.Pod{}
	if err := legacyscheme.Scheme.Convert(p, spec, nil); err != nil {
		panic(err)
	}

	p.Status = corev1.PodStatus{
		Phase:     corev1.PodRunning,
		HostIP:    hostIP,
		HostIPs:   []corev1.HostIP{{IP: hostIP}},
		PodIP:     ip,
		PodIPs:    []corev1.PodIP{{IP: ip}},
		StartTime: &started,
		QOSClass:  corev1.PodQOSBurstable,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: started},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: started},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: started},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: started},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: started},
		},
	}
	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name:        c.Name,
			Image:       c.Image,
			ImageID:     c.Image + "@sha256:" + fmt.Sprintf("%064x", i%20),
			ContainerID: fmt.Sprintf("containerd://%064x", i*2+len(c.Name)),
			Ready:       true,
			Started:     &tru,
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
		})
	}
	status = &api.Pod{}
	if err := legacyscheme.Scheme.Convert(p, status, nil); err != nil {
		panic(err)
	}
	return spec, status
}

// startWithNamespaces starts an etcd in this process and builds the map on
// it with benchNamespaces created; close stops both.
func startWithNamespaces(ctx context.Context) (e *embedded.Etcd, w *storagemap.Session, close func(), err error) {
	e, err = embedded.Start(nil)
	if err != nil {
		return nil, nil, nil, err
	}
	w, err = openSession(ctx, e.ClientURL)
	if err != nil {
		e.Close()
		return nil, nil, nil, err
	}
	close = func() {
		w.Close()
		e.Close()
	}
	if err := seedNamespaces(w); err != nil {
		close()
		return nil, nil, nil, err
	}
	return e, w, close, nil
}

// inNamespace is what a request for resource (pods, or pods/status) in ns
// carries to its store: the namespace, and request info, which the stores'
// declarative validation reads. Every object the bench writes is core v1.
func inNamespace(ctx context.Context, resource, ns string) context.Context {
	res, sub, _ := strings.Cut(resource, "/")
	return genericapirequest.WithRequestInfo(genericapirequest.WithNamespace(ctx, ns),
		&genericapirequest.RequestInfo{IsResourceRequest: true, APIVersion: "v1", Resource: res, Subresource: sub, Namespace: ns})
}
