package storagemap

import (
	"testing"

	"k8s.io/component-base/version"

	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/component-base/featuregate"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
)

// gateState is every gate's value and the emulation versions, process-wide.
func gateState() map[string]string {
	out := map[string]string{}
	for f := range utilfeature.DefaultMutableFeatureGate.GetAll() {
		v := "false"
		if utilfeature.DefaultFeatureGate.Enabled(f) {
			v = "true"
		}
		if utilfeature.DefaultMutableFeatureGate.ExplicitlySet(f) {
			v += " (explicit)"
		}
		out[string(f)] = v
	}
	out["gate emulation version"] = utilfeature.DefaultMutableFeatureGate.EmulationVersion().String()
	out["kube emulation version"] = compatibility.DefaultComponentGlobalsRegistry.EffectiveVersionFor(basecompatibility.DefaultKubeComponent).EmulationVersion().String()
	return out
}

func sameState(t *testing.T, when string, want map[string]string) {
	t.Helper()
	got := gateState()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s is %q, was %q", when, k, got[k], v)
		}
	}
}

// TestFeatureGatesActWhileTheMapLives: the server's code reads the
// process-wide gate, so the flags' gates and version hold there while a map
// lives, and the process is as before once it is closed, even over a test's
// own gate settings.
func TestFeatureGatesActWhileTheMapLives(t *testing.T) {
	const alpha = featuregate.Feature("CBORServingAndStorage")
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, "StorageVersionMigrator", false)
	before := gateState()
	if utilfeature.DefaultFeatureGate.Enabled(alpha) {
		t.Fatalf("%s is on by default; pick an alpha gate", alpha)
	}

	w := build(t, "--feature-gates=AllAlpha=true,AllBeta=true,StorageVersionMigrator=true", "--runtime-config=api/all=true")
	if !utilfeature.DefaultFeatureGate.Enabled(alpha) || !utilfeature.DefaultFeatureGate.Enabled("StorageVersionMigrator") {
		t.Errorf("the flags' gates do not hold while the map lives")
	}
	if !w.Map.Table.FeatureGates[string(alpha)] || !w.Map.Table.FeatureGates["AllAlpha"] {
		t.Errorf("route table featureGates lack the gates turned on: %v", w.Map.Table.FeatureGates)
	}
	w.Close()
	sameState(t, "after the map", before)

	w = build(t, "--emulated-version=1.34")
	if got := utilfeature.DefaultMutableFeatureGate.EmulationVersion().String(); got != "1.34" {
		t.Errorf("gate emulation version %s while a 1.34 map lives", got)
	}
	if w.Map.Table.EmulatedVersion != "1.34" || len(w.Map.Table.FeatureGates) == 0 {
		t.Errorf("route table of a 1.34 map: emulatedVersion %q, featureGates %v, want 1.34 and the gates newer than it off", w.Map.Table.EmulatedVersion, w.Map.Table.FeatureGates)
	}
	w.Close()
	sameState(t, "after the 1.34 map", before)

	// A default map says so and changes nothing.
	w = build(t)
	if w.Map.Table.EmulatedVersion != version.DefaultKubeBinaryVersion || w.Map.Table.FeatureGates != nil {
		t.Errorf("default map: emulatedVersion %q, featureGates %v", w.Map.Table.EmulatedVersion, w.Map.Table.FeatureGates)
	}
}
