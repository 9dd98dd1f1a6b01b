package serverflags

import (
	"context"
	"fmt"
	"strings"
	"testing"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/capabilities"
)

// Maps of the same flags share the process-wide state, whatever order they
// close in: the last to close puts back what the process had.
func TestTheLastMapToCloseRestoresTheProcess(t *testing.T) {
	before := utilfeature.DefaultMutableFeatureGate.EmulationVersion().String()
	flags := []string{"--emulated-version=" + minorsBack(1), "--allow-privileged=true"}
	a, _ := parse(t, flags...)
	b, _ := parse(t, flags...)
	releaseA, err := a.Apply(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	releaseB, err := b.Apply(context.Background())
	if err != nil {
		t.Fatalf("a second map of the same flags: %v", err)
	}
	if _, gates := b.Effective(); len(gates) == 0 || fmt.Sprint(gates) != fmt.Sprint(func() map[string]bool { _, g := a.Effective(); return g }()) {
		t.Errorf("the second map says it turns %v, the first that it turns others", gates)
	}
	// The first opened closes first, and twice: the second still holds.
	if err := releaseA(); err != nil {
		t.Fatal(err)
	}
	if err := releaseA(); err != nil {
		t.Fatal(err)
	}
	if got := utilfeature.DefaultMutableFeatureGate.EmulationVersion().String(); got != minorsBack(1) {
		t.Errorf("with the second map open the process emulates %s, want %s", got, minorsBack(1))
	}
	if !capabilities.Get().AllowPrivileged {
		t.Error("with the second map open, privileged containers are refused")
	}
	if err := releaseB(); err != nil {
		t.Fatal(err)
	}
	if got := utilfeature.DefaultMutableFeatureGate.EmulationVersion().String(); got != before {
		t.Errorf("once both closed the process emulates %s, was %s", got, before)
	}
	if capabilities.Get().AllowPrivileged {
		t.Error("once both closed, privileged containers are still allowed")
	}
}

// A map whose flags set other process-wide values than an open one's is
// refused, naming both; once the first closes it opens, with its own.
func TestAMapOfOtherGatesWaitsForTheOpenOne(t *testing.T) {
	a, _ := parse(t, "--feature-gates=AllBeta=true")
	b, _ := parse(t, "--allow-privileged=true")
	releaseA, err := a.Apply(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Apply(context.Background()); err == nil || !strings.Contains(err.Error(), "another map open in this process has `--feature-gates=AllBeta=true` `--allow-privileged=false`, this one `--allow-privileged=true`") {
		t.Fatalf("a map of other flags while one is open: %v", err)
	}
	if capabilities.Get().AllowPrivileged {
		t.Error("the refused map's --allow-privileged was applied")
	}
	if err := releaseA(); err != nil {
		t.Fatal(err)
	}
	releaseB, err := b.Apply(context.Background())
	if err != nil {
		t.Fatalf("once the first map closed: %v", err)
	}
	defer releaseB()
	if !capabilities.Get().AllowPrivileged {
		t.Error("the second map's --allow-privileged=true is not the process's: the first map's value stuck")
	}
	if utilfeature.DefaultFeatureGate.Enabled("AllBeta") {
		t.Error("the first map's AllBeta outlived it")
	}
}
