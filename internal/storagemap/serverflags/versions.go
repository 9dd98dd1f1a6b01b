package serverflags

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/component-base/featuregate"
)

// versions are the server's emulated version, minimum compatibility version
// and feature gates, as its flags set them.
//
// kube-apiserver parses those flags into the process-wide component registry,
// and its code reads the process-wide feature gate (utilfeature) wherever a
// gate matters: which APIs a group serves, which fields a strategy keeps. So
// regctl parses them as the server does, into a registry of its own that
// starts from the process's gate, and applies the outcome to the process-wide
// gate and version for as long as a map built with them lives, as the
// server's own test harness does. Nothing outlives the maps that hold it
// (process.go): a map opened after them starts from the defaults again.
type versions struct {
	registry basecompatibility.ComponentGlobalsRegistry
	version  basecompatibility.MutableEffectiveVersion
	gate     featuregate.MutableVersionedFeatureGate
	// flags are those that set them, for messages.
	flags []*pflag.Flag
	// changed are the gates the flags turn from the process's value, by
	// name, nil when none.
	changed map[string]bool
}

func newVersions() *versions {
	v := &versions{
		registry: basecompatibility.NewComponentGlobalsRegistry(),
		version:  compatibility.DefaultBuildEffectiveVersion(),
		gate:     utilfeature.DefaultMutableFeatureGate.DeepCopy(),
	}
	if err := v.registry.Register(basecompatibility.DefaultKubeComponent, v.version, v.gate); err != nil {
		panic(fmt.Sprintf("registering kube-apiserver's version and feature gate: %v", err))
	}
	return v
}

// watch keeps the flags of fs that set the versions, to name them in
// messages.
func (v *versions) watch(fs *pflag.FlagSet) {
	for _, name := range []string{"emulated-version", "min-compatibility-version", "feature-gates"} {
		if f := fs.Lookup(name); f != nil {
			v.flags = append(v.flags, f)
		}
	}
}

// set applies the flags as the server does when it starts (the registry's
// Set, then its checks), to regctl's registry only.
func (v *versions) set() error {
	if err := v.registry.Set(); err != nil {
		return fmt.Errorf("reading %s: %w", v.given(), err)
	}
	if errs := v.registry.Validate(); len(errs) > 0 {
		return fmt.Errorf("checking %s: %w", v.given(), utilerrors.NewAggregate(errs))
	}
	return nil
}

// given names the version flags given, as a message says what it read.
func (v *versions) given() string {
	var names []string
	for _, f := range v.flags {
		if f.Changed {
			names = append(names, "`--"+f.Name+"`")
		}
	}
	if len(names) == 0 {
		return "the emulated version and feature gates"
	}
	return strings.Join(names, " and ")
}

// effective is what the route table says of the versions: the emulated
// version, and the gates whose value differs from the process's own (known
// once applied).
func (v *versions) effective() (emulated string, gates map[string]bool) {
	ev := v.version.EmulationVersion()
	return fmt.Sprintf("%d.%d", ev.Major(), ev.Minor()), v.changed
}

// apply makes the process-wide feature gate and kube version those of the
// flags, and returns what puts them back as they were. As the registry does,
// the gate's emulation version is set before its values, which are checked
// against it.
func (v *versions) apply() (restore func() error, err error) {
	global := utilfeature.DefaultMutableFeatureGate
	v.changed = differing(v.gate, global)
	oldEmulation, oldMinCompat := global.EmulationVersion(), global.MinCompatibilityVersion()
	sameVersion := v.gate.EmulationVersion().EqualTo(oldEmulation) && v.gate.MinCompatibilityVersion().EqualTo(oldMinCompat)
	if sameVersion && len(v.changed) == 0 {
		return func() error { return nil }, nil
	}
	globalVersion, _ := compatibility.DefaultComponentGlobalsRegistry.EffectiveVersionFor(basecompatibility.DefaultKubeComponent).(basecompatibility.MutableEffectiveVersion)
	var oldVersion, oldVersionMinCompat *version.Version
	if globalVersion != nil {
		oldVersion, oldVersionMinCompat = globalVersion.EmulationVersion(), globalVersion.MinCompatibilityVersion()
	}
	// set are the gates given values here; explicit what those of them
	// already set explicitly held.
	var set []string
	explicit := map[string]bool{}
	restore = func() error {
		// Values first, while at the flags' version, which they fit; then
		// the old version and the values set explicitly before.
		var errs []error
		for _, f := range set {
			errs = append(errs, global.ResetFeatureValueToDefault(featuregate.Feature(f)))
		}
		errs = append(errs, global.SetEmulationVersionAndMinCompatibilityVersion(oldEmulation, oldMinCompat), global.SetFromMap(explicit))
		if globalVersion != nil {
			globalVersion.SetEmulationVersion(oldVersion)
			globalVersion.SetMinCompatibilityVersion(oldVersionMinCompat)
		}
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("restoring the feature gates: %w", err)
		}
		return nil
	}
	if globalVersion != nil {
		globalVersion.SetEmulationVersion(v.version.EmulationVersion())
		globalVersion.SetMinCompatibilityVersion(v.version.MinCompatibilityVersion())
	}
	if err := global.SetEmulationVersionAndMinCompatibilityVersion(v.gate.EmulationVersion(), v.gate.MinCompatibilityVersion()); err != nil {
		return nil, errors.Join(fmt.Errorf("applying %s: %w", v.given(), err), restore())
	}
	values := differing(v.gate, global)
	for f := range values {
		set = append(set, f)
		if global.ExplicitlySet(featuregate.Feature(f)) {
			explicit[f] = global.Enabled(featuregate.Feature(f))
		}
	}
	if err := global.SetFromMap(values); err != nil {
		return nil, errors.Join(fmt.Errorf("applying %s: %w", v.given(), err), restore())
	}
	return restore, nil
}

// differing are the gates whose value in gate is not their value in base,
// nil when none. Asking a gate records the question, at a cost that grows
// with each gate asked: comparing all of them took a few milliseconds of
// every command. So when the two are at one version and neither sets any
// gate (a value may follow another's, as with AllAlpha), every gate has its
// default in both, and none is asked.
func differing(gate, base featuregate.MutableVersionedFeatureGate) map[string]bool {
	all := gate.GetAll()
	sameVersion := gate.EmulationVersion().EqualTo(base.EmulationVersion()) &&
		gate.MinCompatibilityVersion().EqualTo(base.MinCompatibilityVersion())
	if sameVersion && !setsAny(gate, all) && !setsAny(base, all) {
		return nil
	}
	var out map[string]bool
	for f := range all {
		if on := gate.Enabled(f); on != base.Enabled(f) {
			if out == nil {
				out = map[string]bool{}
			}
			out[string(f)] = on
		}
	}
	return out
}

// setsAny tells whether gate sets any of the features explicitly.
func setsAny(gate featuregate.MutableVersionedFeatureGate, features map[featuregate.Feature]featuregate.FeatureSpec) bool {
	for f := range features {
		if gate.ExplicitlySet(f) {
			return true
		}
	}
	return false
}

// shortenFeatureGatesUsage keeps the help of --feature-gates to what it
// does: the server's help goes on to list every gate it knows, hundreds of
// lines.
func shortenFeatureGatesUsage(f *pflag.Flag) {
	if f == nil {
		return
	}
	usage, _, _ := strings.Cut(f.Usage, "Options are:")
	f.Usage = strings.TrimSpace(usage) + " The gates are kube-apiserver's (kube-apiserver --help lists them); regctl routes -o yaml lists those that differ from their defaults."
}
