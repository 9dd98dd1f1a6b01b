package itemjson

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func pod(name string) runtime.Object {
	return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"}}
}

// streamedJSON is what a Writer writes of objs as one List.
func streamedJSON(objs []runtime.Object) (string, error) {
	var w Writer
	var out []byte
	for i, obj := range objs {
		var err error
		if out, err = w.Item(out, i, obj); err != nil {
			return "", err
		}
	}
	return string(out) + End(len(objs)), nil
}
