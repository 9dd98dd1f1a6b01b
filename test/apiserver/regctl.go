package apiserver

import (
	"context"
	"testing"
	"time"

	"github.com/spf13/pflag"

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
	w, err := storagemap.Open(context.Background(), storagemap.Config{Options: opts, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("building regctl's map: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}
