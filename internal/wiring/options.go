// Package wiring builds kube-apiserver's storage map with the server's own
// code: its option structs and defaults, its storage factory and
// RESTOptionsGetter, its REST storage providers (every built-in group), and
// the apiextensions and aggregator servers' stores with the custom resources
// of the CRDs in etcd. The result is a route per path and a handle per path,
// ready for regctl's commands.
package wiring

import (
	"fmt"

	"github.com/spf13/pflag"
	apiserveroptions "k8s.io/kubernetes/cmd/kube-apiserver/app/options"
)

// Options are kube-apiserver's own server options. regctl exposes the subset
// that decides how the API is stored, under the server's flag names,
// with the server's defaults and help text.
type Options struct {
	Server *apiserveroptions.ServerRunOptions
}

// NewOptions returns the options of a default kube-apiserver.
func NewOptions() *Options {
	return &Options{Server: apiserveroptions.NewServerRunOptions()}
}

// serverFlags are the kube-apiserver flags, outside the etcd flag set, that
// change the storage map.
var serverFlags = []string{
	"runtime-config",
	"service-cluster-ip-range",
	"service-node-port-range",
	"event-ttl",
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
// few other server flags that shape the storage map.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.Server.Etcd.AddFlags(fs)
	for _, name := range inertEtcdFlags {
		if f := fs.Lookup(name); f != nil {
			f.Hidden = true
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
