package logs

import (
	"bytes"
	"strings"
	"testing"

	"go.uber.org/zap"
	"google.golang.org/grpc/grpclog"
	"k8s.io/klog/v2"
)

// TestVerbositySetsWhatTheLibrariesSay: at 0 klog, grpc and an embedded
// etcd say nothing; above, what they say goes to the writer given, klog at
// that verbosity and etcd's warnings, its info lines too from 2.
func TestVerbositySetsWhatTheLibrariesSay(t *testing.T) {
	var w bytes.Buffer
	Setup(2, &w)
	klog.V(2).Info("klog at two")
	klog.V(3).Info("klog at three")
	grpclog.Info("grpc info")
	klog.Flush()
	if got := w.String(); !strings.Contains(got, "klog at two") || strings.Contains(got, "klog at three") || !strings.Contains(got, "grpc info") {
		t.Errorf("at -v 2 the writer got %q; want klog up to 2 and grpc", got)
	}
	if e := Etcd(); e == nil || !e.Core().Enabled(zap.InfoLevel) {
		t.Error("at -v 2 an embedded etcd says no info lines")
	}

	Setup(1, &w)
	if e := Etcd(); e == nil || e.Core().Enabled(zap.InfoLevel) || !e.Core().Enabled(zap.WarnLevel) {
		t.Error("at -v 1 an embedded etcd's logger is not at warnings")
	}

	w.Reset()
	Setup(0, &w)
	klog.Info("klog at zero")
	klog.Warning("klog warns")
	grpclog.Warning("grpc warns")
	klog.Flush()
	if w.Len() != 0 || klog.V(1).Enabled() {
		t.Errorf("at 0 the writer got %q, klog -v 1 enabled %v; want silence", w.String(), klog.V(1).Enabled())
	}
	if Etcd() != nil {
		t.Error("at 0 an embedded etcd has a logger")
	}
	// A second silencing is the first's: grpc's logger may only be set
	// before grpc runs.
	Setup(0, &w)
	if Etcd() != nil || w.Len() != 0 {
		t.Error("silencing twice changed what is said")
	}
}
