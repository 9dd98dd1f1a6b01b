package itemjson

import (
	"bytes"
	"flag"
	"io"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	"github.com/regctl/regctl/internal/render/kubectltest"
)

// typedJSON agrees with the plain path on the probe, so that a process
// prints with it; CI runs this on every Go release go.mod allows.
func TestProbeFindsTypedJSONAgreeing(t *testing.T) {
	if why := (&itemJSON{fast: (*typedJSON).append}).disagreement(); why != "" {
		t.Fatal(why)
	}
}

// withItemJSON has json lists printed through an itemJSON whose fast path
// is fast, counting the calls to it, for the rest of the test; klog writes
// at -v 1 into the returned buffer.
func withItemJSON(t *testing.T, fast func(*typedJSON, []byte, any, int) ([]byte, error)) (calls *int, log *bytes.Buffer) {
	calls, log = new(int), new(bytes.Buffer)
	saved := listItems
	listItems = &itemJSON{fast: func(e *typedJSON, dst []byte, obj any, margin int) ([]byte, error) {
		*calls++
		return fast(e, dst, obj, margin)
	}}
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	for name, value := range map[string]string{"logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL", "v": "1"} {
		if err := fs.Set(name, value); err != nil {
			t.Fatal(err)
		}
	}
	klog.SetOutput(log)
	t.Cleanup(func() {
		listItems = saved
		_ = fs.Set("v", "0")
		klog.SetOutput(io.Discard)
	})
	return calls, log
}

// switchObjects hold what the faulty encoder below gets wrong.
func switchObjects() []runtime.Object {
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "page", Namespace: "shop"},
		Data:       map[string]string{"index.html": "<html>\n</html>\n", "n": "1.0"},
	}
	return []runtime.Object{pod("web"), cm, pod("<db>")}
}

// If the probe finds typedJSON printing other bytes than encoding/json (here
// an encoder that escapes '<' in capitals, as a Go release might), every
// json list of the process is printed by the plain path, which is still what
// kubectl prints; at -v 1 klog says why, once.
func TestTypedJSONThatDisagreesIsNotUsed(t *testing.T) {
	calls, log := withItemJSON(t, func(e *typedJSON, dst []byte, obj any, margin int) ([]byte, error) {
		out, err := e.append(dst, obj, margin)
		return bytes.ReplaceAll(out, []byte(`\u003c`), []byte(`\u003C`)), err
	})
	objs := switchObjects()
	want, err := kubectltest.GetJSON(objs)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(want, `\u003c`) {
		t.Fatalf("the objects hold no '<' for the faulty encoder to get wrong:\n%s", want)
	}
	probed := -1
	for range 2 {
		got, err := streamedJSON(objs)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("after a disagreement, the list is not kubectl's:\n%s", kubectltest.FirstDifference(got, want))
		}
		if probed < 0 {
			probed = *calls
		}
	}
	if probed == 0 || *calls != probed {
		t.Errorf("the faulty encoder was called %d times by the probe and %d times in all: it printed", probed, *calls)
	}
	klog.Flush()
	if n := strings.Count(log.String(), "printing json with encoding/json"); n != 1 || !strings.Contains(log.String(), `\u003Ctag`) {
		t.Errorf("klog said %d times why json is printed by encoding/json, want once, naming the difference:\n%s", n, log.String())
	}
}

// A typedJSON that agrees prints every list, and klog says nothing.
func TestTypedJSONThatAgreesIsUsed(t *testing.T) {
	calls, log := withItemJSON(t, (*typedJSON).append)
	objs := switchObjects()
	if _, err := streamedJSON(objs); err != nil {
		t.Fatal(err)
	}
	probed := *calls
	got, err := streamedJSON(objs)
	if err != nil {
		t.Fatal(err)
	}
	if *calls != probed+len(objs) {
		t.Errorf("typedJSON printed %d of %d objects", *calls-probed, len(objs))
	}
	if want, err := kubectltest.GetJSON(objs); err != nil || got != want {
		t.Errorf("the list is not kubectl's (%v):\n%s", err, kubectltest.FirstDifference(got, want))
	}
	klog.Flush()
	if log.Len() > 0 {
		t.Errorf("klog said: %s", log.String())
	}
}
