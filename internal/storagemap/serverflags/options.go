// Package serverflags holds kube-apiserver's own options as regctl takes
// them: the server's flags that decide how the API is stored, with its
// defaults and help; its emulated version and feature gates, checked and
// applied as the server applies them; and where flags come from besides the
// command line (etcdctl's environment, a static Pod manifest).
package serverflags

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/pflag"
	apiserveroptions "k8s.io/kubernetes/cmd/kube-apiserver/app/options"

	"github.com/regctl/regctl/internal/clusterrelease"
	"github.com/regctl/regctl/internal/servermanifest"
)

// Options are kube-apiserver's own server options. regctl exposes the subset
// that decides how the API is stored, under the server's flag names,
// with the server's defaults and help text.
type Options struct {
	Server *apiserveroptions.ServerRunOptions

	// versions holds --emulated-version, --min-compatibility-version and
	// --feature-gates, parsed and checked by the server's own component
	// registry. It is regctl's, not the process-wide one the server uses,
	// so that it only acts while a map built with it lives (see
	// versions.go).
	versions *versions

	// inert are the accepted flags that shape nothing regctl builds.
	inert []*pflag.Flag

	// image is the kube-apiserver image of the manifest the flags came
	// from (ApplyManifest): its tag is the cluster's release.
	image string
	// manifestFiles are the files the manifest's storage flags name, as
	// regctl reads them (under --manifest-root when given).
	manifestFiles []string
}

// NewOptions returns the options of a default kube-apiserver.
func NewOptions() *Options {
	s := apiserveroptions.NewServerRunOptions()
	v := newVersions()
	s.GenericServerRunOptions.ComponentGlobalsRegistry = v.registry
	return &Options{Server: s, versions: v}
}

// serverFlags are the kube-apiserver flags, outside the etcd flag set, that
// change the storage map.
var serverFlags = []string{
	"allow-privileged",
	"runtime-config",
	"service-cluster-ip-range",
	"service-node-port-range",
	"event-ttl",
	"feature-gates",
	"emulated-version",
	"min-compatibility-version",
	"emulation-forward-compatible",
	"runtime-config-emulation-forward-compatible",
}

// inertEtcdFlags are etcd flags that tune background work regctl never runs
// (compaction, metric polling, health checks, reloading the encryption
// config). They are accepted so that a server's command line can be reused,
// but hidden from help.
var inertEtcdFlags = []string{
	"etcd-compaction-interval",
	"etcd-count-metric-poll-period",
	"etcd-db-metric-poll-interval",
	"etcd-healthcheck-timeout",
	"etcd-readycheck-timeout",
	"default-watch-cache-size",
	"encryption-provider-config-automatic-reload",
}

// AddFlags registers the server's etcd flags (EtcdOptions.AddFlags) and the
// few other server flags that shape the storage map, then every other flag
// of kube-apiserver, hidden: those shape nothing regctl builds
// (authentication, serving, admission, ...), and are accepted so that a
// server's whole command line can be given as it is.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.Server.Etcd.AddFlags(fs)
	for _, name := range inertEtcdFlags {
		if f := fs.Lookup(name); f != nil {
			f.Hidden = true
			o.inert = append(o.inert, f)
		}
	}
	all := o.Server.Flags()
	for _, name := range serverFlags {
		f := lookup(all.FlagSets, name)
		if f == nil {
			panic(fmt.Sprintf("kube-apiserver has no flag %q", name))
		}
		fs.AddFlag(f)
	}
	shortenFeatureGatesUsage(fs.Lookup("feature-gates"))
	o.versions.watch(fs)
	for _, set := range all.Order {
		all.FlagSets[set].VisitAll(func(f *pflag.Flag) {
			taken := fs.Lookup(f.Name) != nil || (f.Shorthand != "" && fs.ShorthandLookup(f.Shorthand) != nil)
			if taken {
				return
			}
			f.Hidden = true
			fs.AddFlag(f)
			o.inert = append(o.inert, f)
		})
	}
}

// Ignored lists the accepted kube-apiserver flags given on the command line
// that shape nothing regctl builds, sorted.
func (o *Options) Ignored() []string {
	var out []string
	for _, f := range o.inert {
		if f.Changed {
			out = append(out, "--"+f.Name)
		}
	}
	slices.Sort(out)
	return out
}

func lookup(sets map[string]*pflag.FlagSet, name string) *pflag.Flag {
	for _, fs := range sets {
		if f := fs.Lookup(name); f != nil {
			return f
		}
	}
	return nil
}

// etcdctlEnvironment is etcdctl's environment, by the server flag each
// variable stands for, so that a shell set up for etcdctl works as it is.
var etcdctlEnvironment = []struct{ env, flag string }{
	{"ETCDCTL_ENDPOINTS", "etcd-servers"},
	{"ETCDCTL_CACERT", "etcd-cafile"},
	{"ETCDCTL_CERT", "etcd-certfile"},
	{"ETCDCTL_KEY", "etcd-keyfile"},
}

// FromEnvironment sets the etcd flags not given on the command line from
// etcdctl's environment variables: a flag always wins.
func FromEnvironment(fs *pflag.FlagSet, getenv func(string) string) error {
	for _, e := range etcdctlEnvironment {
		v := getenv(e.env)
		f := fs.Lookup(e.flag)
		if v == "" || f == nil || f.Changed {
			continue
		}
		if err := fs.Set(e.flag, v); err != nil {
			return fmt.Errorf("reading %s for `--%s`: %w", e.env, e.flag, err)
		}
	}
	return nil
}

// manifestFileFlags are the storage flags that name files: a manifest names
// them as they are on its node, which --manifest-root relocates.
var manifestFileFlags = []string{"etcd-cafile", "etcd-certfile", "etcd-keyfile", "encryption-provider-config"}

// ApplyManifest sets the flags of fs from the kube-apiserver command line
// in the static Pod manifest file, but for those given on regctl's command
// line, which win. Files the storage flags name are read under root when it
// is set (the node's /etc/kubernetes copied to root/etc/kubernetes).
func (o *Options) ApplyManifest(fs *pflag.FlagSet, file, root string) error {
	server, err := servermanifest.Read(file)
	if err != nil {
		return err
	}
	o.image = server.Image
	given := map[string]bool{}
	fs.Visit(func(f *pflag.Flag) { given[f.Name] = true })
	for _, m := range server.Flags {
		f := fs.Lookup(m.Name)
		switch {
		case f == nil:
			return fmt.Errorf("the apiserver manifest %s sets --%s, which is not a flag of kube-apiserver %s%s", file, m.Name, KubernetesVersion(), o.otherRelease())
		case given[m.Name]:
			continue
		}
		value := m.Value
		if slices.Contains(manifestFileFlags, m.Name) {
			value = servermanifest.Under(root, value)
			o.manifestFiles = append(o.manifestFiles, value)
		}
		if err := fs.Set(m.Name, value); err != nil {
			return fmt.Errorf("the apiserver manifest %s: --%s: %w%s", file, m.Name, err, o.otherRelease())
		}
	}
	return nil
}

// Image is the kube-apiserver image of the manifest the flags came from,
// empty when none: its tag is the cluster's release.
func (o *Options) Image() string { return o.image }

// FromManifest tells whether path is a file the manifest's storage flags
// named (ApplyManifest).
func (o *Options) FromManifest(path string) bool { return slices.Contains(o.manifestFiles, path) }

// Apply checks the flags as the server does when it starts (the version
// registry's Set and Validate, then the checks of --runtime-config) and
// makes the process-wide feature gate, kube version and capabilities those
// of the flags, until release lets go of them (process.go): the server's
// code reads the process-wide gate wherever a gate matters. While another
// map holds other values, it refuses.
func (o *Options) Apply(ctx context.Context) (release func() error, err error) {
	if err := o.versions.set(); err != nil {
		return nil, err
	}
	if err := validate(ctx, o.Server); err != nil {
		return nil, err
	}
	return o.hold()
}

// Effective is what the route table says of the versions: the emulated
// version, and the gates whose value differs from the process's own (known
// once applied).
func (o *Options) Effective() (emulated string, gates map[string]bool) {
	return o.versions.effective()
}

// otherRelease completes an error about a manifest's flag when the
// manifest's image is of another release than this build's: that is why.
func (o *Options) otherRelease() string {
	if m := clusterrelease.Judge(BuildRelease(), "", []clusterrelease.Source{ManifestSource(o.image)}); m != nil {
		return fmt.Sprintf(" (the manifest runs kube-apiserver %s: use the regctl for Kubernetes %s)", m.Cluster, m.Minor())
	}
	return ""
}

// WithEncryptionConfig is o with another `--encryption-provider-config`:
// what a backup's values were encrypted with, where its keys are not
// today's. o is left as it is: the server's options embed the control
// plane's by pointer, which is copied too, so that today's session, built
// again later, still writes with today's keys.
func (o *Options) WithEncryptionConfig(path string) *Options {
	c := *o
	server := *o.Server
	controlplane := *o.Server.Options
	etcd := *o.Server.Etcd
	etcd.EncryptionProviderConfigFilepath = path
	controlplane.Etcd = &etcd
	server.Options = &controlplane
	c.Server = &server
	return &c
}
