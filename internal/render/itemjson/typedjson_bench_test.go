package itemjson

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// benchPod is a pod as a server stores one, managed fields and all: what
// a long list is made of.
func benchPod() *corev1.Pod {
	at := metav1.Unix(1700000000, 0)
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-7d4b9c8f5-x2x9z", Namespace: "shop", UID: "8d0e7c2a-1b2c-4d5e-9f00-123456789abc", ResourceVersion: "123456",
			CreationTimestamp: at, Labels: map[string]string{"app": "web", "pod-template-hash": "7d4b9c8f5"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d4b9c8f5", UID: "5b1"}},
			ManagedFields: []metav1.ManagedFieldsEntry{{
				Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Time: &at, FieldsType: "FieldsV1",
				FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"5b1\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:protocol":{}}},"f:resources":{".":{},"f:limits":{".":{},"f:cpu":{},"f:memory":{}}}}}}}`)},
			}},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "web", Image: "nginx:1.27", Ports: []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
				Resources:     corev1.ResourceRequirements{Limits: corev1.ResourceList{"memory": resource.MustParse("64Mi"), "cpu": resource.MustParse("250m")}},
				LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80), Path: "/healthz"}}},
			}},
			NodeName: "node-1",
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.12", StartTime: &at,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at}}},
	}
}

// One pod as an item of a json list, by typedJSON: the cost per object of
// printing a long list.
func BenchmarkTypedJSONPod(b *testing.B) {
	pod := benchPod()
	var e typedJSON
	var out []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if out, err = e.append(out[:0], pod, 8); err != nil {
			b.Fatal(err)
		}
	}
}

// The check a process makes at its first json list: typedJSON and the
// plain path on the probe's objects, with no plan built yet (as in a
// process's first print) and with the plans built.
func BenchmarkTypedJSONProbe(b *testing.B) {
	for _, bc := range []struct {
		name string
		cold bool
	}{{"first print", true}, {"plans built", false}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if bc.cold {
					plansMu.Lock()
					plans = map[planKey]*plan{}
					plansMu.Unlock()
				}
				if why := (&itemJSON{fast: (*typedJSON).append}).disagreement(); why != "" {
					b.Fatal(why)
				}
			}
		})
	}
}
