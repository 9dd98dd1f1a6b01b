package cli

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/apis/coordination"

	"github.com/regctl/regctl/internal/clock"
	"github.com/regctl/regctl/internal/etcdview/embedded"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
)

// globalsWith are the globals of a command line, with the flags the root
// command binds that these tests read.
func globalsWith(t *testing.T, args ...string) (*Globals, *bytes.Buffer, error) {
	t.Helper()
	var errOut bytes.Buffer
	g := &Globals{IO: IOStreams{Out: &bytes.Buffer{}, ErrOut: &errOut}, Server: serverflags.NewOptions(), RequestTimeout: 5 * time.Second}
	fs := pflag.NewFlagSet("regctl", pflag.ContinueOnError)
	g.Server.AddFlags(fs)
	g.AddRevisionFlag(fs)
	return g, &errOut, fs.Parse(args)
}

// TestRevisionFlag reads `--revision` as a number or a time, and refuses
// what is neither.
func TestRevisionFlag(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		rev  int64
		time string
	}{
		{"12", 12, ""},
		{"0", 0, ""},
		{"90m", 0, "90m"},
		{"2026-11-29T14:00:00Z", 0, "2026-11-29T14:00:00Z"},
	} {
		g, _, err := globalsWith(t, "--revision", tc.arg)
		if err != nil || g.Revision != tc.rev || g.RevisionTime.Text != tc.time || g.RevisionGiven() != (tc.arg != "0") {
			t.Errorf("--revision %s: revision %d, time %q, given %v (%v)", tc.arg, g.Revision, g.RevisionTime.Text, g.RevisionGiven(), err)
		}
	}
	want := `invalid argument "yesterday" for "--revision" flag: give a revision number, an RFC 3339 time (2026-11-29T14:00:00Z) or an age (90m)`
	if _, _, err := globalsWith(t, "--revision", "yesterday"); err == nil || err.Error() != want {
		t.Errorf("%v, want %q", err, want)
	}
	fs := pflag.NewFlagSet("regctl", pflag.ContinueOnError)
	(&Globals{}).AddRevisionFlag(fs)
	if usage := fs.FlagUsages(); !strings.Contains(usage, "--revision N|TIME") {
		t.Errorf("usage %q, want it to name N|TIME", usage)
	}
}

// TestTellRevision tells a time given to `--revision` as the revision a
// Lease renewed at or before it, once, and says so on stderr; a number is
// left as it is, and a time before every clock is refused.
func TestTellRevision(t *testing.T) {
	ctx := context.Background()
	e, err := embedded.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	etcd := "--etcd-servers=" + e.ClientURL
	g, _, err := globalsWith(t, etcd)
	if err != nil {
		t.Fatal(err)
	}
	cfg := g.SessionConfig()
	cfg.Only = clock.LeasesPath
	s, err := storagemap.OpenData(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := s.Map.Handles[clock.LeasesPath]
	c, err := h.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	renew := func(ago time.Duration) int64 {
		t.Helper()
		holder := "apiserver-1"
		l := &coordination.Lease{ObjectMeta: metav1.ObjectMeta{Name: holder, Namespace: "kube-system"},
			Spec: coordination.LeaseSpec{HolderIdentity: &holder, RenewTime: &metav1.MicroTime{Time: now.Add(-ago)}}}
		data, err := runtime.Encode(h.StorageCodec(), l)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Put(ctx, "/registry/leases/kube-system/"+holder, string(data))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Header.Revision
	}
	first := renew(time.Minute)
	second := renew(30 * time.Second)

	g, errOut, err := globalsWith(t, etcd, "--revision", "45s")
	if err != nil {
		t.Fatal(err)
	}
	if err := g.TellRevision(ctx); err != nil || g.Revision != first {
		t.Fatalf("45s ago is revision %d (%v), want %d", g.Revision, err, first)
	}
	wantNote := fmt.Sprintf(") is revision %d (Lease kube-system/apiserver-1 renewed at ", first)
	if note := errOut.String(); !strings.HasPrefix(note, "note: 45s ago (") || !strings.Contains(note, wantNote) || !strings.Contains(note, fmt.Sprintf("the next clock, revision %d, reads ", second)) || strings.Count(note, "\n") != 1 {
		t.Errorf("note %q, want one line naming revision %d, its clock and the next, %d", note, first, second)
	}
	if err := g.TellRevision(ctx); err != nil || g.Revision != first || strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("told again: %d, %v, %q; want it told once", g.Revision, err, errOut.String())
	}

	g, errOut, _ = globalsWith(t, etcd, "--revision", "7")
	if err := g.TellRevision(ctx); err != nil || g.Revision != 7 || errOut.Len() != 0 {
		t.Errorf("a number: %d, %v, %q; want it left as it is, silently", g.Revision, err, errOut.String())
	}
	g, _, _ = globalsWith(t, etcd, "--revision", "2h")
	if err := g.TellRevision(ctx); err == nil || !strings.Contains(err.Error(), "ago") || !strings.Contains(err.Error(), "is before the first revision etcd can tell the time of") {
		t.Errorf("a time before every clock: %v", err)
	}
	g, _, _ = globalsWith(t, "--revision", "2h")
	if err := g.TellRevision(ctx); err == nil || !strings.Contains(err.Error(), "no etcd given") {
		t.Errorf("no etcd: %v", err)
	}
}
