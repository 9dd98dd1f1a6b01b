package serverflags

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/regctl/regctl/internal/logs/logstest"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/version"
)

func TestMain(m *testing.M) { logstest.Main(m) }

// parse parses args as kube-apiserver flags into a default server's
// options, and returns them with their flag set.
func parse(t *testing.T, args ...string) (*Options, *pflag.FlagSet) {
	t.Helper()
	o := NewOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parsing %v: %v", args, err)
	}
	return o, fs
}

// minorsBack is the version n minors before this release's.
func minorsBack(n uint) string {
	v := utilversion.MustParse(version.DefaultKubeBinaryVersion)
	return fmt.Sprintf("%d.%d", v.Major(), v.Minor()-n)
}

// TestApplyHoldsTheFlagsVersionsUntilRestored: the server's code reads the
// process-wide gate, so Apply makes it the flags' and restore puts back
// what was there.
func TestApplyHoldsTheFlagsVersionsUntilRestored(t *testing.T) {
	before := utilfeature.DefaultMutableFeatureGate.EmulationVersion().String()
	o, _ := parse(t, "--emulated-version="+minorsBack(1), "--feature-gates=AllBeta=true")
	restore, err := o.Apply(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := utilfeature.DefaultMutableFeatureGate.EmulationVersion().String(); got != minorsBack(1) {
		t.Errorf("the process emulates %s while the flags' versions hold, want %s", got, minorsBack(1))
	}
	emulated, gates := o.Effective()
	if emulated != minorsBack(1) || !gates["AllBeta"] {
		t.Errorf("Effective = %s, %v; want %s and AllBeta", emulated, gates, minorsBack(1))
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	if got := utilfeature.DefaultMutableFeatureGate.EmulationVersion().String(); got != before {
		t.Errorf("after restore the process emulates %s, was %s", got, before)
	}

	// Default flags say so.
	o, _ = parse(t)
	restore, err = o.Apply(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer restore()
	if emulated, gates := o.Effective(); emulated != version.DefaultKubeBinaryVersion || gates != nil {
		t.Errorf("default flags: Effective = %s, %v", emulated, gates)
	}
}

func TestBadVersionFlagsAreRefusedWithTheServersReason(t *testing.T) {
	before := utilfeature.DefaultMutableFeatureGate.EmulationVersion().String()
	for flag, want := range map[string]string{
		"--feature-gates=NoSuchGate=true":  "reading `--feature-gates`: unrecognized feature gate: NoSuchGate",
		"--feature-gates=AllAlpha":         "reading `--feature-gates`: missing bool value for AllAlpha",
		"--emulated-version=1.20":          "emulation version 1.20 is not between [" + minorsBack(3) + ", " + version.DefaultKubeBinaryVersion + ".0]",
		"--emulated-version=x":             `reading ` + "`--emulated-version`" + `: could not parse "x" as version`,
		"--min-compatibility-version=1.99": "checking `--min-compatibility-version`",
	} {
		o, _ := parse(t, flag)
		restore, err := o.Apply(context.Background())
		if err == nil {
			restore()
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", flag, err, want)
		}
	}
	if got := utilfeature.DefaultMutableFeatureGate.EmulationVersion().String(); got != before {
		t.Errorf("after refused flags the process emulates %s, was %s", got, before)
	}
}

// TestEtcdctlEnvironmentStandsInForFlagsNotGiven: a shell set up for
// etcdctl works as it is, and a flag given wins.
func TestEtcdctlEnvironmentStandsInForFlagsNotGiven(t *testing.T) {
	o, fs := parse(t, "--etcd-servers=https://given:2379")
	env := map[string]string{"ETCDCTL_ENDPOINTS": "https://env:2379", "ETCDCTL_CACERT": "/env/ca.crt", "ETCDCTL_KEY": "/env/key.pem"}
	if err := FromEnvironment(fs, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	tr := o.Server.Etcd.StorageConfig.Transport
	if !slices.Equal(tr.ServerList, []string{"https://given:2379"}) || tr.TrustedCAFile != "/env/ca.crt" || tr.KeyFile != "/env/key.pem" || tr.CertFile != "" {
		t.Errorf("transport %+v: want the given server and the environment's CA and key", tr)
	}
}

// TestAManifestsFlagsUnderTheGivenOnes reads a kubeadm static Pod
// manifest: its flags are the server's but for those given, which win;
// the files it names are read under --manifest-root; a flag this release's
// server does not have is refused, naming the release.
func TestAManifestsFlagsUnderTheGivenOnes(t *testing.T) {
	dir := t.TempDir()
	write := func(command string) string {
		path := filepath.Join(dir, "kube-apiserver.yaml")
		manifest := `apiVersion: v1
kind: Pod
metadata: {name: kube-apiserver, namespace: kube-system}
spec:
  containers:
  - name: kube-apiserver
    image: registry.k8s.io/kube-apiserver:` + KubernetesVersion() + `
    command: [` + command + `]
`
		if err := os.WriteFile(path, []byte(manifest), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	path := write(`kube-apiserver, --etcd-servers=https://10.0.0.1:2379, --etcd-cafile=/etc/kubernetes/pki/etcd/ca.crt, --watch-cache-sizes=secrets#0, "--authorization-mode=Node,RBAC"`)
	o, fs := parse(t, "--watch-cache-sizes=events#0")
	if err := o.ApplyManifest(fs, path, "/copy"); err != nil {
		t.Fatal(err)
	}
	etcd := o.Server.Etcd
	if !slices.Equal(etcd.StorageConfig.Transport.ServerList, []string{"https://10.0.0.1:2379"}) ||
		etcd.StorageConfig.Transport.TrustedCAFile != "/copy/etc/kubernetes/pki/etcd/ca.crt" ||
		!slices.Equal(etcd.WatchCacheSizes, []string{"events#0"}) {
		t.Errorf("etcd options %+v: want the manifest's server, its CA under the root, and the given watch cache sizes", etcd)
	}
	if o.Image() != "registry.k8s.io/kube-apiserver:"+KubernetesVersion() {
		t.Errorf("image %q", o.Image())
	}
	if got := o.Ignored(); !slices.Equal(got, []string{"--authorization-mode"}) {
		t.Errorf("Ignored = %v, want the manifest's authorization mode, which shapes nothing regctl builds", got)
	}

	path = write("kube-apiserver, --no-such-flag=1")
	o, fs = parse(t)
	err := o.ApplyManifest(fs, path, "")
	if err == nil || !strings.Contains(err.Error(), "sets --no-such-flag, which is not a flag of kube-apiserver "+KubernetesVersion()) {
		t.Errorf("a flag the server does not have: %v", err)
	}
}

// TestAnotherEncryptionConfigLeavesTheOptionsAlone: a backup's encryption
// config is for the source's session; today's, built again after a
// restore writes CRDs, writes with today's keys.
func TestAnotherEncryptionConfigLeavesTheOptionsAlone(t *testing.T) {
	o, _ := parse(t, "--encryption-provider-config=/today.yaml")
	other := o.WithEncryptionConfig("/backup.yaml")
	if other.Server.Etcd.EncryptionProviderConfigFilepath != "/backup.yaml" || o.Server.Etcd.EncryptionProviderConfigFilepath != "/today.yaml" {
		t.Errorf("other %q, today %q", other.Server.Etcd.EncryptionProviderConfigFilepath, o.Server.Etcd.EncryptionProviderConfigFilepath)
	}
}
