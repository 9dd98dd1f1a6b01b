package apiserver

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
)

// Map builds regctl's storage map from kube-apiserver flags, as regctl's
// commands do, to compare with a server started with the same flags. It is
// closed when the test ends.
func Map(t testing.TB, flags ...string) *storagemap.Session {
	t.Helper()
	opts := serverflags.NewOptions()
	fs := pflag.NewFlagSet("regctl", pflag.ContinueOnError)
	opts.AddFlags(fs)
	if err := fs.Parse(flags); err != nil {
		t.Fatal(err)
	}
	// The tests run in parallel, and a map of other feature gates or
	// emulated version than one open waits for it to close: the process
	// has one of each.
	var w *storagemap.Session
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		w, err = storagemap.Open(ctx, storagemap.Config{Options: opts, Timeout: 5 * time.Second})
		if errors.Is(err, serverflags.ErrOtherMapOpen) {
			return false, nil
		}
		return true, err
	})
	if err != nil {
		t.Fatalf("building regctl's map: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}
