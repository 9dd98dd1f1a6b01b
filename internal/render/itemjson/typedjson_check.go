package itemjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/klog/v2"
)

// listItems is how ListWriter writes the objects of a json list.
var listItems = &itemJSON{fast: (*typedJSON).append}

// itemJSON writes objects with typedJSON as long as typedJSON writes, on a
// probe, what encoding/json's plain path writes; else with the plain path.
// typedJSON re-implements encoding/json's rules for speed, and those rules
// belong to the Go release the binary is built with: a release that
// changes them (an escape, omitzero, a Marshaler's handling) makes typedJSON
// print other bytes than kubectl would. The equivalence tests catch that in
// CI on the oldest Go release go.mod allows and the one in use; the probe
// catches it in a binary built with a release they never ran on.
type itemJSON struct {
	// fast is typedJSON's append; tests put a faulty one in its place.
	fast func(e *typedJSON, dst []byte, obj any, margin int) ([]byte, error)

	once sync.Once
	// plain is set when the probe found typedJSON disagreeing.
	plain bool
}

// append appends obj as kubectl prints it as an item of a list, indented
// by margin. The probe runs at the first call, so that a command printing
// no json list pays nothing for it.
func (j *itemJSON) append(e *typedJSON, dst []byte, obj any, margin int) ([]byte, error) {
	j.once.Do(func() {
		if why := j.disagreement(); why != "" {
			j.plain = true
			klog.V(1).Infof("printing json with encoding/json, not regctl's one-pass encoder: %s", why)
		}
	})
	if j.plain {
		return appendPlainJSON(dst, obj, margin)
	}
	return j.fast(e, dst, obj, margin)
}

// disagreement says how typedJSON and the plain path differ on the
// probe, or "" if they agree.
func (j *itemJSON) disagreement() string {
	var e typedJSON
	for _, obj := range probeObjects() {
		fast, fastErr := j.fast(&e, nil, obj, len("        "))
		plain, plainErr := appendPlainJSON(nil, obj, len("        "))
		switch {
		case fastErr != nil || plainErr != nil:
			return fmt.Sprintf("encoding the probe's %T: one-pass encoder: %v, encoding/json: %v", obj, fastErr, plainErr)
		case !bytes.Equal(fast, plain):
			i := 0
			for i < len(fast) && i < len(plain) && fast[i] == plain[i] {
				i++
			}
			// The lines are the probe's own data, safe to print as they are.
			return fmt.Sprintf("the probe's %T differs at line %d: it writes `%s` where encoding/json writes `%s`",
				obj, bytes.Count(plain[:i], []byte("\n"))+1, lineAt(fast, i), lineAt(plain, i))
		}
	}
	return ""
}

// lineAt is the line of b that holds b[i], its indentation left out.
func lineAt(b []byte, i int) string {
	i = min(i, len(b))
	start := bytes.LastIndexByte(b[:i], '\n') + 1
	end := len(b)
	if n := bytes.IndexByte(b[i:], '\n'); n >= 0 {
		end = i + n
	}
	return strings.TrimLeft(string(b[start:end]), " ")
}

// appendPlainJSON appends obj as kubectl get prints it in a list, by the
// path that defines it: encoding/json's encoding of obj, read into Go
// values as kubectl reads JSON (k8s.io/apimachinery/pkg/util/json) once from
// the server's response and once from the List it makes of the objects,
// then written by json.MarshalIndent, which writes a map's keys in order.
func appendPlainJSON(dst []byte, obj any, margin int) ([]byte, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return dst, fmt.Errorf("encoding json: %w", err)
	}
	var v any
	if err := utiljson.Unmarshal(data, &v); err != nil {
		return dst, fmt.Errorf("reading back encoding/json's output: %w", err)
	}
	if data, err = json.Marshal(v); err != nil {
		return dst, fmt.Errorf("encoding json: %w", err)
	}
	if err := utiljson.Unmarshal(data, &v); err != nil {
		return dst, fmt.Errorf("reading back encoding/json's output: %w", err)
	}
	out, err := json.MarshalIndent(v, strings.Repeat(" ", margin), "    ")
	if err != nil {
		return dst, fmt.Errorf("encoding json: %w", err)
	}
	return append(dst, out...), nil
}

// probeObjects are objects with every kind of value typedJSON's plans
// write: embedded structs, pointers set and unset, string maps and maps of
// Marshalers, nil, empty and full slices, bytes, quantities, times,
// int-or-strings, managed fields, a raw extension whose numbers and escapes
// kubectl rewrites, strings to escape, omitempty and omitzero fields, and a
// custom resource as unstructured.
func probeObjects() []any {
	at := metav1.Unix(1700000000, 0)
	grace, yes := int64(30), true
	escapes := "quote \" back \\ <tag> & \u2028 \x01 \t \n é \xff"
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "shop", UID: "8d0e7c2a", ResourceVersion: "42",
			CreationTimestamp: at, DeletionGracePeriodSeconds: &grace,
			Labels:      map[string]string{"b": "2", "a": "1", "app.kubernetes.io/name": "web"},
			Annotations: map[string]string{"note": escapes},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "5b1", Controller: &yes,
			}},
			Finalizers: []string{},
			ManagedFields: []metav1.ManagedFieldsEntry{{
				Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, Time: &at, FieldsType: "FieldsV1",
				FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{}}}}}`)},
			}},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "c", Image: "busybox", Command: []string{"sh", "-c", "echo 'a && b' > /x"},
				Ports: []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
				Resources: corev1.ResourceRequirements{
					Limits:   corev1.ResourceList{"memory": resource.MustParse("64Mi"), "cpu": resource.MustParse("250m")},
					Requests: corev1.ResourceList{},
				},
				LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
					Port: intstr.FromString("http"), Path: "/healthz?a=1&b=2"}}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{
					Port: intstr.FromInt32(8080)}}},
			}},
			NodeSelector:                  map[string]string{},
			TerminationGracePeriodSeconds: &grace,
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, StartTime: &at,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at}},
		},
	}
	secret := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "shop"},
		Immutable:  &yes,
		Data:       map[string][]byte{"password": []byte("s3cr\xffet"), "empty": {}, "nil": nil},
		Type:       corev1.SecretTypeOpaque,
	}
	revision := &appsv1.ControllerRevision{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ControllerRevision"},
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop"},
		Data:       runtime.RawExtension{Raw: []byte(`{"spec":{"b":1.0,"a":[1e3,-0.0,"\u00e9\/<"]},"spec":{"c":2}}`)},
		Revision:   3,
	}
	custom := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "shop"},
		"spec": map[string]any{
			"size": int64(3), "ratio": 0.5, "big": 1e21, "on": true, "none": nil,
			"tags": []any{"b", "a", map[string]any{"z": "<", "y": escapes}}, "empty": map[string]any{},
		},
	}}
	return []any{pod, secret, revision, custom}
}
