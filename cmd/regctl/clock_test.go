package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/regctl/regctl/internal/clock"
	"github.com/regctl/regctl/internal/stores/history"
	"github.com/regctl/regctl/test/apiserver"
)

// elector runs a leader election through the server, as a controller
// does, renewing its Lease every retry period, until the test ends.
type elector struct {
	t      *testing.T
	s      *apiserver.Server
	ns     string
	period time.Duration
}

const electorLease = "clock-test"

func startElector(t *testing.T, s *apiserver.Server, ns string) *elector {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: electorLease, Namespace: ns},
		Client:     s.Client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: "regctl-test"},
	}
	e := &elector{t: t, s: s, ns: ns, period: 200 * time.Millisecond}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: 10 * time.Second, RenewDeadline: 8 * time.Second, RetryPeriod: e.period,
		Callbacks: leaderelection.LeaderCallbacks{OnStartedLeading: func(context.Context) {}, OnStoppedLeading: func() {}},
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); le.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return e
}

// renewedAfter waits for the elector's first renewal whose time is after
// at, and returns its revision and time.
func (e *elector) renewedAfter(at time.Time) (int64, time.Time) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	leases := e.s.Client.CoordinationV1().Leases(e.ns)
	renewed := func(l *coordinationv1.Lease) (int64, time.Time, bool) {
		if l.Spec.RenewTime == nil || !l.Spec.RenewTime.After(at) {
			return 0, time.Time{}, false
		}
		rev, err := strconv.ParseInt(l.ResourceVersion, 10, 64)
		if err != nil {
			e.t.Fatal(err)
		}
		return rev, l.Spec.RenewTime.Time, true
	}
	for {
		rv := ""
		if l, err := leases.Get(ctx, electorLease, metav1.GetOptions{}); err == nil {
			if rev, t, ok := renewed(l); ok {
				return rev, t
			}
			rv = l.ResourceVersion
		}
		w, err := leases.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", electorLease).String(), ResourceVersion: rv})
		if err != nil {
			e.t.Fatal(err)
		}
		for ev := range w.ResultChan() {
			if l, ok := ev.Object.(*coordinationv1.Lease); ok {
				if rev, t, ok := renewed(l); ok {
					w.Stop()
					return rev, t
				}
			}
		}
		if ctx.Err() != nil {
			e.t.Fatalf("no renewal of the elector's lease after %s", at)
		}
	}
}

// noteRevision is the revision a note on stderr told for a time.
var noteRevision = regexp.MustCompile(`note: (\S+)(?: ago \(\S+\))? is revision (\d+) \(Lease \S+ renewed at \S+; (?:the next clock, revision \d+, reads \S+|no clock after it up to the current revision \d+)\)\n`)

func toldRevision(t *testing.T, stderr, asked string) int64 {
	t.Helper()
	m := noteRevision.FindStringSubmatch(stderr)
	if m == nil || m[1] != asked {
		t.Fatalf("no note of the revision %s is: %q", asked, stderr)
	}
	rev, _ := strconv.ParseInt(m[2], 10, 64)
	return rev
}

// TestTimesOfDayAreRevisions changes a config map between two known
// instants on a cluster whose kube-apiserver runs, beside a controller
// that renews its leader election's Lease, and reads it at times: a time
// between the instants (an RFC 3339 time, an age, rev:TIME of diff and
// restore) reads the first value, one after the second; inspect --history
// times each revision within the clocks around its true write; a time
// before the first clock or after now is refused in one line.
func TestTimesOfDayAreRevisions(t *testing.T) {
	t.Parallel()
	s := apiserver.Start(t)
	etcdFlag := "--etcd-servers=" + s.EtcdURL
	ctx := context.Background()
	const ns, name = "regctl-clock", "app"
	if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e := startElector(t, s, ns)
	cms := s.Client.CoreV1().ConfigMaps(ns)

	// v1, then instant A once a renewal followed it.
	beforeV1 := time.Now()
	v1, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	afterV1 := time.Now()
	rev1, _ := strconv.ParseInt(v1.ResourceVersion, 10, 64)
	e.renewedAfter(afterV1)
	a := time.Now()
	// Instant B; v2 is written once the elector renewed two seconds after
	// it: a renewal computed before B has landed by then, and B plus the
	// time a command takes to tell an age is still before v2.
	b := time.Now()
	e.renewedAfter(b.Add(2 * time.Second))
	beforeV2 := time.Now()
	v1.Data["v"] = "2"
	v2, err := cms.Update(ctx, v1, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	afterV2 := time.Now()
	rev2, _ := strconv.ParseInt(v2.ResourceVersion, 10, 64)
	e.renewedAfter(afterV2)
	c := time.Now()

	getAt := func(at string) (string, int64) {
		t.Helper()
		stdout, stderr, code := run(t, "get", "configmaps/"+name, "-n", ns, "--revision", at, "-o", "jsonpath={.data.v}", etcdFlag)
		if code != 0 {
			t.Fatalf("get --revision %s: exit %d: %s", at, code, stderr)
		}
		return stdout, toldRevision(t, stderr, at)
	}
	for _, at := range []time.Time{a, b} {
		text := at.UTC().Format(time.RFC3339Nano)
		if v, rev := getAt(text); v != "1" || rev < rev1 || rev >= rev2 {
			t.Errorf("--revision %s (between v1 at %d and v2 at %d) is revision %d, reads v=%s; want v1", text, rev1, rev2, rev, v)
		}
	}
	if v, rev := getAt(c.UTC().Format(time.RFC3339Nano)); v != "2" || rev < rev2 {
		t.Errorf("--revision after v2 (revision %d) is revision %d, reads v=%s; want v2", rev2, rev, v)
	}
	age := time.Since(b).Round(time.Millisecond).String()
	if v, rev := getAt(age); v != "1" || rev < rev1 || rev >= rev2 {
		t.Errorf("--revision %s (B) is revision %d, reads v=%s; want v1", age, rev, v)
	}
	if v, _ := getAt("1ms"); v != "2" {
		t.Errorf("--revision 1ms reads v=%s; want v2", v)
	}

	// Times no clock can tell, in one line each.
	for at, want := range map[string]string{
		"10m":                  "ago (", // the cluster is younger than that
		"2099-01-01T00:00:00Z": "2099-01-01T00:00:00Z is after now (",
	} {
		_, stderr, code := run(t, "get", "configmaps/"+name, "-n", ns, "--revision", at, etcdFlag)
		if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) || at == "10m" && !strings.Contains(stderr, "is before the") {
			t.Errorf("--revision %s: exit %d, %q", at, code, stderr)
		}
	}

	// diff and restore take rev:TIME.
	from := "rev:" + b.UTC().Format(time.RFC3339Nano)
	report, code := changesReport(t, "--from", from, "configmaps", "-n", ns, etcdFlag)
	if code != 1 || report.From.Revision < rev1 || report.From.Revision >= rev2 || len(report.Objects) != 1 || !strings.Contains(fmt.Sprint(report.Objects[0]), "data.v") {
		t.Errorf("diff --from %s: exit %d, %+v", from, code, report)
	}
	beforeRestore := time.Now()
	stdout, stderr, code := run(t, "restore", "--from", from, "configmaps/"+name, "-n", ns, "--overwrite", etcdFlag)
	afterRestore := time.Now()
	if code != 0 || !strings.Contains(stdout, "configmap/"+name+" overwritten: data.v") {
		t.Fatalf("restore --from %s: exit %d\n%s%s", from, code, stdout, stderr)
	}
	if rev := toldRevision(t, stderr, b.UTC().Format(time.RFC3339Nano)); rev < rev1 || rev >= rev2 {
		t.Errorf("restore --from %s told revision %d, want one between %d and %d", from, rev, rev1, rev2)
	}
	if got, err := cms.Get(ctx, name, metav1.GetOptions{}); err != nil || got.Data["v"] != "1" {
		t.Errorf("the server serves %v (%v) after the restore, want v=1", got.Data, err)
	}
	e.renewedAfter(afterRestore)

	// Each revision's time: the creation's and the update's exact (whole
	// seconds, from the object), the restore's (which wrote back v1's
	// managedFields and creationTimestamp) between the renewals around it.
	var h history.Object
	if err := json.Unmarshal([]byte(mustRun(t, "inspect", "configmaps/"+name, "-n", ns, "--history", "-o", "json", etcdFlag)), &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Revisions) != 3 {
		t.Fatalf("history: %+v, want the creation, the update and the restore", h.Revisions)
	}
	for i, want := range []struct {
		exact         bool
		clock         string
		after, before time.Time
	}{
		{true, "metadata.creationTimestamp", beforeV1, afterV1},
		{true, "metadata.managedFields (", beforeV2, afterV2},
		{false, "", beforeRestore, afterRestore},
	} {
		w := h.Revisions[i].Time
		switch {
		case w == nil:
			t.Errorf("revision %d has no time", h.Revisions[i].Revision)
		case want.exact && (w.At == nil || !strings.HasPrefix(w.Clock, want.clock) || w.At.Before(want.after.Truncate(time.Second)) || w.At.After(want.before)):
			t.Errorf("revision %d: %s by %q, want a time of %s between %s and %s", h.Revisions[i].Revision, clock.When(w), w.Clock, want.clock, want.after, want.before)
		case !want.exact && (w.At != nil || w.After == nil || w.Before == nil || w.After.After(want.before) || w.Before.Before(want.after)):
			t.Errorf("revision %d: %s, want the renewals around its write, between %s and %s", h.Revisions[i].Revision, clock.When(w), want.after, want.before)
		}
	}
	t.Logf("the restore's revision is timed %s; the lease's renewal period is %s", clock.When(h.Revisions[2].Time), e.period)
	table := mustRun(t, "inspect", "configmaps/"+name, "-n", ns, "--history", etcdFlag)
	if lines := strings.Split(strings.TrimSpace(table), "\n"); len(lines) != 4 || !strings.Contains(lines[0], "TIME") || !strings.Contains(lines[3], "between ") {
		t.Errorf("--history table:\n%s", table)
	}
}
