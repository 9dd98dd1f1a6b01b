//go:build controllers

package agreement

import (
	"context"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
	kcmtesting "k8s.io/kubernetes/cmd/kube-controller-manager/app/testing"
	"k8s.io/kubernetes/cmd/kube-controller-manager/names"
	"k8s.io/utils/ptr"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/why"
	"github.com/regctl/regctl/test/apiserver"
)

// startControllers runs a real kube-controller-manager of regctl's release
// in-process against s, with only the controllers named: those that
// decide whether a deletion finishes.
func startControllers(t *testing.T, s *apiserver.Server, controllers ...string) {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: s.Config.Host, CertificateAuthority: s.Config.CAFile, CertificateAuthorityData: s.Config.CAData, TLSServerName: s.Config.ServerName, InsecureSkipTLSVerify: s.Config.Insecure}
	cfg.AuthInfos["test"] = &clientcmdapi.AuthInfo{Token: s.Config.BearerToken}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test"}
	cfg.CurrentContext = "test"
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	server := kcmtesting.StartTestServerOrDie(t, ctx, []string{
		"--kubeconfig=" + kubeconfig, "--leader-elect=false", "--secure-port=0",
		"--controllers=" + strings.Join(controllers, ","),
		"--concurrent-namespace-syncs=2",
	})
	t.Cleanup(func() { cancel(); server.TearDownFn() })
}

// TestWhyAgreesWithTheNamespaceController deletes namespaces held in each
// way a namespace is held, on a real kube-apiserver with a real
// kube-controller-manager (its namespace controller, garbage collector
// and claim protection), waits for the namespace controller to say what
// remains, and checks regctl's why against it: what the controller counts
// by resource and by finalizer, regctl counts alike, and every key etcd
// holds in the namespace is among regctl's objects.
func TestWhyAgreesWithTheNamespaceController(t *testing.T) {
	s := apiserver.Start(t)
	startControllers(t, s, names.NamespaceController, names.GarbageCollectorController, names.PersistentVolumeClaimProtectionController)
	ctx := context.Background()
	apiserver.CreateWidgetsCRD(t, s)
	widgets := s.Dynamic.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"})

	// A custom resource's finalizer.
	mkNamespace(t, s, "held-by-cr")
	w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1", "finalizers": []any{"example.com/hold"}}}}
	if _, err := widgets.Namespace("held-by-cr").Create(ctx, w, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A claim in use by a pod that waits for its node's kubelet.
	mkNamespace(t, s, "held-by-pvc")
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	if _, err := s.Client.CoreV1().PersistentVolumeClaims("held-by-pvc").Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.PodSpec{NodeName: "node-1",
		Containers: []corev1.Container{{Name: "c", Image: "nginx"}},
		Volumes:    []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}}}
	if _, err := s.Client.CoreV1().Pods("held-by-pvc").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// An owner deleted in the foreground, its dependent held by a
	// finalizer and blocking its owner's deletion.
	mkNamespace(t, s, "held-by-foreground")
	owner, err := s.Client.CoreV1().ConfigMaps("held-by-foreground").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dep := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dependent", Finalizers: []string{"example.com/hold"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: owner.UID, BlockOwnerDeletion: ptr.To(true)}}}}
	if _, err := s.Client.CoreV1().ConfigMaps("held-by-foreground").Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Client.CoreV1().ConfigMaps("held-by-foreground").Delete(ctx, "owner", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the garbage collector to delete the dependent", func() bool {
		got, err := s.Client.CoreV1().ConfigMaps("held-by-foreground").Get(ctx, "dependent", metav1.GetOptions{})
		return err == nil && got.DeletionTimestamp != nil
	})

	// The owner waits for its dependent; the namespace's why says so too.
	owned := regctlWhy(t, s, "held-by-foreground")
	if got := heldBy(owned, "configmaps", "owner"); len(got) != 1 || !strings.Contains(got[0], "configmaps/dependent blocks its foreground deletion") {
		t.Errorf("held-by-foreground: the owner is held by %q", got)
	}
	session := apiserver.Map(t, "--etcd-servers="+s.EtcdURL)
	configmaps, err := session.Map.Handle("configmaps")
	if err != nil {
		t.Fatal(err)
	}
	one, err := why.ObjectOf(ctx, keyspaceOf(t, session), handle.Target{Handle: configmaps, Namespace: "held-by-foreground"}, "owner", why.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Objects) != 1 || one.Objects[0].Name != "dependent" {
		t.Errorf("the owner's dependents: %+v", one.Objects)
	}

	for _, ns := range []string{"held-by-cr", "held-by-pvc", "held-by-foreground"} {
		if err := s.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cr := agree(t, s, "held-by-cr", corev1.NamespaceFinalizersRemaining)
	if len(cr.Objects) != 1 || cr.Objects[0].Resource != "widgets.example.com" || cr.Objects[0].DeletionTimestamp == nil ||
		!strings.Contains(stepsText(cr), `"value":"example.com/hold"`) {
		t.Errorf("held-by-cr: %+v", cr)
	}
	// With pods left, the namespace controller deletes nothing else and
	// counts nothing in its conditions: what remains is regctl's to say.
	pvcs := agree(t, s, "held-by-pvc", "")
	if got := heldBy(pvcs, "persistentvolumeclaims", "data"); !slices.Contains(got, "used by pods/web") {
		t.Errorf("held-by-pvc: the claim is held by %q, want pods/web", got)
	}
	if got := heldBy(pvcs, "pods", "web"); len(got) != 1 || !strings.Contains(got[0], "kubelet of node node-1") {
		t.Errorf("held-by-pvc: the pod is held by %q, want node-1's kubelet", got)
	}
	// The way out regctl printed for the pod, taken: the controllers
	// then finish the namespace.
	if !strings.Contains(stepsText(pvcs), "kubectl delete pod web -n held-by-pvc --grace-period=0 --force") {
		t.Errorf("held-by-pvc: no step deletes the pod:\n%s", stepsText(pvcs))
	}
	if err := s.Client.CoreV1().Pods("held-by-pvc").Delete(ctx, "web", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "namespace held-by-pvc to be gone", func() bool {
		_, err := s.Client.CoreV1().Namespaces().Get(ctx, "held-by-pvc", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	// The namespace controller deletes the owner again in the
	// background, which ends its foreground deletion: the dependent's
	// finalizer is what holds the namespace.
	fg := agree(t, s, "held-by-foreground", corev1.NamespaceFinalizersRemaining)
	if len(fg.Objects) != 1 || fg.Objects[0].Name != "dependent" {
		t.Errorf("held-by-foreground: %+v", fg.Objects)
	}
	// The CRD deleted while its object is held: the CRD waits.
	crds, err := apiextensionsclient.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := crds.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, "widgets.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the CRD to be terminating", func() bool {
		got, err := crds.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "widgets.example.com", metav1.GetOptions{})
		return err == nil && got.DeletionTimestamp != nil
	})
	if r := regctlWhy(t, s, "held-by-cr"); len(r.TerminatingCRDs) != 1 || r.TerminatingCRDs[0] != (why.Count{Name: "widgets.example.com", Objects: 1}) {
		t.Errorf("terminating CRDs %+v", r.TerminatingCRDs)
	}

	// An APIService whose service does not exist: discovery fails, and no
	// namespace finishes, however empty.
	agg, err := aggregatorclient.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	svc := &v1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1.broken.example.com"}, Spec: v1.APIServiceSpec{
		Group: "broken.example.com", Version: "v1", GroupPriorityMinimum: 100, VersionPriority: 100, InsecureSkipTLSVerify: true,
		Service: &v1.ServiceReference{Namespace: "kube-system", Name: "nothing"}}}
	if _, err := agg.ApiregistrationV1().APIServices().Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mkNamespace(t, s, "held-by-apiservice")
	if _, err := s.Client.CoreV1().ConfigMaps("held-by-apiservice").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Client.CoreV1().Namespaces().Delete(ctx, "held-by-apiservice", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	as := agree(t, s, "held-by-apiservice", corev1.NamespaceDeletionDiscoveryFailure)
	if len(as.UnavailableAPIServices) != 1 || as.UnavailableAPIServices[0].Name != "v1.broken.example.com" || as.UnavailableAPIServices[0].Service != "kube-system/nothing" {
		t.Errorf("unavailable APIServices %+v", as.UnavailableAPIServices)
	}
	if len(as.WayOut) == 0 || !strings.Contains(strings.Join(as.WayOut[0].Commands, " "), "kubectl delete apiservice v1.broken.example.com") {
		t.Errorf("the way out does not start with the APIService: %+v", as.WayOut)
	}
}

func mkNamespace(t *testing.T, s *apiserver.Server, name string) {
	t.Helper()
	if _, err := s.Client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func waitFor(t *testing.T, what string, done func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 90*time.Second, true, func(context.Context) (bool, error) { return done(), nil })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func keyspaceOf(t *testing.T, s *storagemap.Session) handle.Keyspace {
	t.Helper()
	ks, err := s.Keyspace(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// agree waits until the namespace controller has set condition on ns,
// then checks regctl's why of ns against what the controller says
// remains and against every key etcd holds in ns.
func agree(t *testing.T, s *apiserver.Server, ns string, condition corev1.NamespaceConditionType) *why.Report {
	t.Helper()
	ctx := context.Background()
	var got *corev1.Namespace
	waitFor(t, "the namespace controller's "+string(condition)+" on "+ns, func() bool {
		n, err := s.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, c := range n.Status.Conditions {
			// "": any condition says the controller has been through it.
			if condition == "" || c.Type == condition && c.Status == corev1.ConditionTrue {
				got = n
				return true
			}
		}
		return false
	})
	r := regctlWhy(t, s, ns)
	resources, finalizers := controllerSays(got)
	mine := map[string]int{}
	for _, c := range r.Remaining {
		mine[c.Name] = c.Objects
	}
	for name, n := range resources {
		if mine[name] != n {
			t.Errorf("%s: the namespace controller counts %d %s, regctl %d", ns, n, name, mine[name])
		}
	}
	// Once past the pods, which it deletes first, the controller counts
	// every resource, as regctl.
	if _, pods := mine["pods"]; !pods && len(resources) != len(mine) {
		t.Errorf("%s: the namespace controller says %v remain, regctl %v", ns, resources, mine)
	}
	mineFin := map[string]int{}
	for _, c := range r.FinalizersRemaining {
		mineFin[c.Name] = c.Objects
	}
	for name, n := range finalizers {
		if mineFin[name] != n {
			t.Errorf("%s: the namespace controller counts %d objects with finalizer %s, regctl %d", ns, n, name, mineFin[name])
		}
	}
	// Nothing etcd holds in the namespace is missed.
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{s.EtcdURL}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	resp, err := c.Get(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithRev(r.Revision))
	if err != nil {
		t.Fatal(err)
	}
	var inEtcd, listed []string
	for _, kv := range resp.Kvs {
		if strings.Contains(string(kv.Key), "/"+ns+"/") {
			inEtcd = append(inEtcd, string(kv.Key))
		}
	}
	for _, o := range r.Objects {
		listed = append(listed, o.Key)
	}
	slices.Sort(listed)
	if !slices.Equal(inEtcd, listed) {
		t.Errorf("%s: regctl lists %q, etcd holds %q", ns, listed, inEtcd)
	}
	return r
}

// regctlWhy is regctl's why of namespace ns, on a map built from the
// server's etcd as the command builds it.
func regctlWhy(t *testing.T, s *apiserver.Server, ns string) *why.Report {
	t.Helper()
	session := apiserver.Map(t, "--etcd-servers="+s.EtcdURL)
	r, err := why.Namespace(context.Background(), keyspaceOf(t, session), ns, why.Options{})
	if err != nil {
		t.Fatalf("regctl why namespace/%s: %v", ns, err)
	}
	return r
}

var (
	remainingResources  = regexp.MustCompile(`([^ ,]+) has (\d+) resource instances`)
	remainingFinalizers = regexp.MustCompile(`([^ ,]+) in (\d+) resource instances`)
)

// controllerSays reads the namespace controller's counts from the
// messages of its conditions: resources as GROUP-qualified names
// ("pods." for the core group), finalizers by name.
func controllerSays(ns *corev1.Namespace) (resources, finalizers map[string]int) {
	resources, finalizers = map[string]int{}, map[string]int{}
	for _, c := range ns.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case corev1.NamespaceContentRemaining:
			for _, m := range remainingResources.FindAllStringSubmatch(c.Message, -1) {
				n, _ := strconv.Atoi(m[2])
				resources[strings.TrimSuffix(m[1], ".")] = n
			}
		case corev1.NamespaceFinalizersRemaining:
			for _, m := range remainingFinalizers.FindAllStringSubmatch(c.Message, -1) {
				n, _ := strconv.Atoi(m[2])
				finalizers[m[1]] = n
			}
		}
	}
	return resources, finalizers
}

func heldBy(r *why.Report, resource, name string) []string {
	for _, o := range r.Objects {
		if o.Resource == resource && o.Name == name {
			return o.HeldBy
		}
	}
	return nil
}

func stepsText(r *why.Report) string {
	var b strings.Builder
	for _, s := range r.WayOut {
		b.WriteString(s.Do + " " + strings.Join(s.Commands, " ") + "\n")
	}
	return b.String()
}
