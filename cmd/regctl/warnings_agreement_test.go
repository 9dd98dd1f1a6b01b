package main

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/regctl/regctl/test/apiserver"
)

// TestWarningsAgreeWithKubeAPIServer reads and writes objects whose
// requests the server answers with warnings (a deprecated kind: Endpoints,
// ComponentStatus; a deprecated version of a CRD; a pod spec its strategy
// warns of) through a real
// kube-apiserver, with kubectl's own get and with client-go requests whose
// warnings go to the warning writer kubectl prints them with, then does the
// same with regctl on the same etcd, and wants the same warnings on stderr.
func TestWarningsAgreeWithKubeAPIServer(t *testing.T) {
	t.Parallel()
	s := apiserver.Start(t)
	etcdFlag := "--etcd-servers=" + s.EtcdURL
	k := newKubectl(t, s)
	ctx := context.Background()
	const ns = "shop"
	if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("writes", func(t *testing.T) {
		for _, c := range []struct {
			name   string
			object func(name string) any
			create func(c kubernetes.Interface, obj any) error
		}{{
			// Deprecated, and the endpoints strategy warns of an IPv6
			// address not in its canonical form.
			name:   "endpoints",
			object: func(name string) any { return warnedEndpoints(name) },
			create: func(c kubernetes.Interface, obj any) error {
				_, err := c.CoreV1().Endpoints(ns).Create(ctx, obj.(*corev1.Endpoints), metav1.CreateOptions{})
				return err
			},
		}, {
			// The pod strategy's WarningsOnCreate warns of an env var
			// defined twice and of a fractional byte quantity.
			name:   "pod",
			object: func(name string) any { return warnedPod(name) },
			create: func(c kubernetes.Interface, obj any) error {
				_, err := c.CoreV1().Pods(ns).Create(ctx, obj.(*corev1.Pod), metav1.CreateOptions{})
				return err
			},
		}} {
			t.Run("create "+c.name, func(t *testing.T) {
				client, warned := warnedClient(t, s.Config)
				if err := c.create(client, c.object("by-server")); err != nil {
					t.Fatal(err)
				}
				manifest, err := json.Marshal(c.object("by-regctl"))
				if err != nil {
					t.Fatal(err)
				}
				_, stderr, code := run(t, "create", "-f", manifestFile(t, string(manifest)), "-n", ns, etcdFlag)
				if code != 0 {
					t.Fatalf("regctl create: exit %d: %s", code, stderr)
				}
				sameWarnings(t, stderr, warned.String())
			})
		}

		t.Run("replace endpoints", func(t *testing.T) {
			client, warned := warnedClient(t, s.Config)
			for _, name := range []string{"by-server", "by-regctl"} {
				ep, err := s.Client.CoreV1().Endpoints(ns).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				ep.Labels = map[string]string{"replaced": "yes"}
				if name == "by-server" {
					if _, err := client.CoreV1().Endpoints(ns).Update(ctx, ep, metav1.UpdateOptions{}); err != nil {
						t.Fatal(err)
					}
					continue
				}
				ep.APIVersion, ep.Kind = "v1", "Endpoints"
				manifest, err := json.Marshal(ep)
				if err != nil {
					t.Fatal(err)
				}
				_, stderr, code := run(t, "replace", "-f", manifestFile(t, string(manifest)), etcdFlag)
				if code != 0 {
					t.Fatalf("regctl replace: exit %d: %s", code, stderr)
				}
				sameWarnings(t, stderr, warned.String())
			}
		})
	})

	deprecateWidgetsV1beta1(t, s, ns)

	// Reads: kubectl's own get against the server, regctl's on its etcd;
	// tables byte for byte, trailing padding included.
	for _, args := range [][]string{
		{"endpoints", "-n", ns},
		{"endpoints/by-server", "-n", ns},
		{"endpoints", "by-server", "by-regctl", "-n", ns, "-o", "name"},
		{"componentstatuses"},
		{"widgets.v1beta1.example.com", "-n", ns},
	} {
		t.Run("get "+caseName(args), func(t *testing.T) {
			kubectlOut, want := k.getWithStderr(t, args...)
			stdout, stderr, code := run(t, append(append([]string{"get"}, args...), etcdFlag)...)
			if code != 0 || stdout == "" {
				t.Fatalf("regctl get: exit %d, stdout %q: %s", code, stdout, stderr)
			}
			sameWarnings(t, stderr, want)
			if args[0] != "componentstatuses" {
				agreeWithKubectl(t, k, s.EtcdURL, args...)
				return
			}
			// The componentstatuses store lists components in the order
			// their probes answer, on the server as in regctl: the lines
			// are the same, their order need not be.
			if got, want := sortedLines(stdout), sortedLines(kubectlOut); got != want {
				t.Errorf("regctl and kubectl differ\nregctl:\n%s\nkubectl:\n%s", stdout, kubectlOut)
			}
		})
	}

	t.Run("delete endpoints", func(t *testing.T) {
		client, warned := warnedClient(t, s.Config)
		if err := client.CoreV1().Endpoints(ns).Delete(ctx, "by-server", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := run(t, "delete", "endpoints/by-regctl", "-n", ns, etcdFlag)
		if code != 0 {
			t.Fatalf("regctl delete: exit %d: %s", code, stderr)
		}
		sameWarnings(t, stderr, warned.String())
	})
}

// deprecateWidgetsV1beta1 creates the widgets CRD with its v1beta1
// deprecated, which the CRD handler warns of on every request to that
// version, and a widget; it waits until the server warns.
func deprecateWidgetsV1beta1(t *testing.T, s *apiserver.Server, ns string) {
	t.Helper()
	ctx := context.Background()
	crd := apiserver.CreateWidgetsCRD(t, s)
	client, err := apiextensionsclient.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	crd.Spec.Versions[0].Deprecated = true
	if _, err := client.ApiextensionsV1().CustomResourceDefinitions().Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	widget := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"}}}
	if _, err := s.Dynamic.Resource(widgets).Namespace(ns).Create(ctx, widget, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		c, warned := warnedClient(t, s.Config)
		// Do, not DoRaw, hands the response's warnings to the handler.
		err := c.CoreV1().RESTClient().Get().AbsPath("/apis/example.com/v1beta1/namespaces", ns, "widgets").Do(ctx).Error()
		return err == nil && warned.Len() > 0, nil
	})
	if err != nil {
		t.Fatalf("waiting for the server to warn of widgets v1beta1: %v", err)
	}
}

// sortedLines is text's lines, sorted.
func sortedLines(text string) string {
	lines := strings.SplitAfter(text, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "")
}

// sameWarnings wants the warnings regctl printed on stderr to be those
// kubectl printed: the same lines, in the same order, and no more. The
// other lines of regctl's stderr are its own (what a write did, that
// admission does not run). A comparison of two empty strings would prove
// nothing, so the server must have warned.
func sameWarnings(t *testing.T, regctl, kubectl string) {
	t.Helper()
	if kubectl == "" {
		t.Fatal("the server sent no warning: the comparison would prove nothing")
	}
	var warned strings.Builder
	for _, line := range strings.SplitAfter(regctl, "\n") {
		if strings.HasPrefix(line, "Warning: ") {
			warned.WriteString(line)
		}
	}
	if warned.String() != kubectl {
		t.Errorf("the warnings differ\nregctl's stderr:\n%s\nkubectl's:\n%s", regctl, kubectl)
	}
}

// warnedClient is a client of the server whose responses' warnings are
// printed into the buffer as kubectl prints them: client-go's warning
// writer, each text once, as kubectl's root command sets it up.
func warnedClient(t *testing.T, config *rest.Config) (kubernetes.Interface, *bytes.Buffer) {
	t.Helper()
	var warned bytes.Buffer
	c := rest.CopyConfig(config)
	c.WarningHandler = rest.NewWarningWriter(&warned, rest.WarningWriterOptions{Deduplicate: true})
	client, err := kubernetes.NewForConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	return client, &warned
}

// warnedEndpoints is an Endpoints object with an IPv6 address not written
// in its canonical form, which the endpoints strategy accepts with a
// warning.
func warnedEndpoints(name string) *corev1.Endpoints {
	return &corev1.Endpoints{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Endpoints"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Subsets: []corev1.EndpointSubset{{
			Addresses: []corev1.EndpointAddress{{IP: "2001:db8:0:0:0:0:0:1"}},
			Ports:     []corev1.EndpointPort{{Port: 80}},
		}},
	}
}

// warnedPod is a pod whose container defines an env var twice and asks for
// a fractional number of bytes of memory: the pod strategy warns of both.
func warnedPod(name string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:  "c",
			Image: "busybox",
			Env:   []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "A", Value: "2"}},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceMemory: resource.MustParse("1500m"),
			}},
		}}},
	}
}
