// Package encryption loads kube-apiserver's --encryption-provider-config
// with the server's own code: the transformers its stores read and write
// through, and the provider that writes each resource's new values, which
// the route table shows.
package encryption

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	apiserverconfig "k8s.io/apiserver/pkg/apis/apiserver"
	apiserverconfigv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/apiserver/pkg/server/options/encryptionconfig"
	"k8s.io/apiserver/pkg/storage/value"
	kmsutil "k8s.io/kms/pkg/util"
)

// Config is what --encryption-provider-config says: the transformers the
// stores use, and for each resource the provider that writes its values.
type Config struct {
	Transformers value.ResourceTransformers
	writers      encryptionconfig.StaticTransformers
	// readers name, for each resource, every provider and key its
	// values are read with, in the order the server tries them.
	readers encryptionconfig.StaticTransformers
	// Stop ends what loading started for KMS plugins: their connections and
	// the server's probes that keep their key IDs current.
	Stop context.CancelFunc
}

// Load loads the encryption config at path (none when empty) as the
// server does. The write
// provider of each resource is read from the configuration, never learnt by
// encrypting a probe: a KMS provider would call its plugin for that.
//
// The server starts with a KMS plugin it cannot reach (only its health check
// fails, and every read and write of the resources it encrypts), waiting
// for the plugin to come up. A command has nothing to wait for: it stops at
// once, naming the plugin, rather than failing each value after the plugin's
// timeout.
func Load(ctx context.Context, path string, timeout time.Duration) (*Config, error) {
	if path == "" {
		return &Config{Stop: func() {}}, nil
	}
	enc, err := load(ctx, path, timeout)
	if err != nil {
		return nil, fmt.Errorf("loading `--encryption-provider-config`: %w", err)
	}
	return enc, nil
}

func load(ctx context.Context, path string, timeout time.Duration) (*Config, error) {
	config, err := readEncryptionConfig(path)
	if err != nil {
		return nil, err
	}
	// Dialing the socket first fails in an instant where the server's
	// first status call would wait for the plugin's whole timeout.
	if err := dialKMSPlugins(ctx, config, timeout); err != nil {
		return nil, err
	}
	// The server's KMS probes run until this context ends: Close ends it.
	ctx, stop := context.WithCancel(ctx)
	loaded, err := loadWithin(ctx, stop, path, timeout)
	if err != nil {
		stop()
		if errors.Is(err, errNoAnswer) {
			return nil, fmt.Errorf("%s did not answer within %s", kmsPlugins(config), timeout)
		}
		return nil, err
	}
	// Loading asked each KMS plugin for its status and key ID once; the
	// server's health checks report that answer (they keep it a few
	// seconds), so a plugin that answers but is not healthy is named too.
	if err := checkKMSPlugins(ctx, loaded.HealthChecks, timeout); err != nil {
		stop()
		return nil, fmt.Errorf("%s not healthy: %w", kmsPlugins(config), err)
	}
	return &Config{
		Transformers: encryptionconfig.StaticTransformers(loaded.Transformers),
		writers:      writeProviders(config),
		readers:      readProviders(config),
		Stop:         stop,
	}, nil
}

// kmsProviders are the config's KMS providers (v2, and v1 where its gate
// is on), in order.
func kmsProviders(config *apiserverconfig.EncryptionConfiguration) []*apiserverconfig.KMSConfiguration {
	var out []*apiserverconfig.KMSConfiguration
	for _, rc := range config.Resources {
		for _, p := range rc.Providers {
			if p.KMS != nil {
				out = append(out, p.KMS)
			}
		}
	}
	return out
}

// dialKMSPlugins connects to the socket of each KMS plugin and hangs up.
// Endpoints the server would refuse are left to its own validation.
func dialKMSPlugins(ctx context.Context, config *apiserverconfig.EncryptionConfiguration, timeout time.Duration) error {
	for _, kms := range kmsProviders(config) {
		addr, err := kmsutil.ParseEndpoint(kms.Endpoint)
		if err != nil {
			continue
		}
		dialer := net.Dialer{Timeout: timeout}
		conn, err := dialer.DialContext(ctx, "unix", addr)
		if err != nil {
			return fmt.Errorf("kms provider %q: plugin %s unreachable: %w", kms.Name, kms.Endpoint, err)
		}
		conn.Close()
	}
	return nil
}

// errNoAnswer is a KMS plugin that accepted the connection but did not
// answer within the request timeout.
var errNoAnswer = errors.New("no answer")

// loadWithin is the server's LoadEncryptionConfig, which waits as long as
// each plugin's own timeout for its first answer, bounded by the request
// timeout. Past it, stop ends the plugin calls under way.
func loadWithin(ctx context.Context, stop context.CancelFunc, path string, timeout time.Duration) (*encryptionconfig.EncryptionConfiguration, error) {
	type result struct {
		loaded *encryptionconfig.EncryptionConfiguration
		err    error
	}
	done := make(chan result, 1)
	go func() {
		loaded, err := encryptionconfig.LoadEncryptionConfig(ctx, path, false, "regctl")
		done <- result{loaded, err}
	}()
	var expired <-chan time.Time
	if timeout > 0 {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		expired = timer.C
	}
	select {
	case r := <-done:
		return r.loaded, r.err
	case <-expired:
		stop()
		<-done
		return nil, errNoAnswer
	}
}

// checkKMSPlugins runs the server's KMS health checks (its /healthz
// kms-providers check).
func checkKMSPlugins(ctx context.Context, checks []healthz.HealthChecker, timeout time.Duration) error {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "/healthz", nil)
	if err != nil {
		return err
	}
	for _, check := range checks {
		if err := check.Check(req); err != nil {
			return err
		}
	}
	return nil
}

// kmsPlugins names the config's KMS plugins in an error: the server's
// health checks number them rather than name them.
func kmsPlugins(config *apiserverconfig.EncryptionConfiguration) string {
	plugins := kmsProviders(config)
	if len(plugins) == 1 {
		return fmt.Sprintf("kms provider %q: plugin %s", plugins[0].Name, plugins[0].Endpoint)
	}
	names := make([]string, len(plugins))
	for i, p := range plugins {
		names[i] = strconv.Quote(p.Name)
	}
	return fmt.Sprintf("kms providers %s: plugins", strings.Join(names, ", "))
}

// WriterOf names the provider that writes new values of a resource
// ("identity", "aescbc:v1:key1", "kms:v2:plugin"), in the envelope's words.
// The lookup (exact resource, then group/*, then */*) is the server's own:
// each candidate is a transformer that writes its provider's name.
func (e *Config) WriterOf(gr schema.GroupResource) string {
	if e == nil || e.writers == nil {
		return "identity"
	}
	name, err := e.writers.TransformerForResource(gr).TransformToStorage(context.Background(), nil, value.DefaultContext(gr.String()))
	if err != nil {
		return "unknown: " + err.Error()
	}
	if len(name) == 0 {
		// No entry matched: the server's lookup falls back to identity,
		// which writes what it is given.
		return "identity"
	}
	return string(name)
}

// ReadersOf names every provider and key the server reads a resource's
// values with, in the order it tries them ("aescbc:v1:key2,
// aescbc:v1:key1, identity"): key names, never key material. The lookup
// is the server's own, as WriterOf's.
func (e *Config) ReadersOf(gr schema.GroupResource) string {
	if e == nil || e.readers == nil {
		return "identity"
	}
	names, err := e.readers.TransformerForResource(gr).TransformToStorage(context.Background(), nil, value.DefaultContext(gr.String()))
	if err != nil || len(names) == 0 {
		return "identity"
	}
	return string(names)
}

// readProviders reads the config's resources in order, as writeProviders,
// naming each resource's providers and keys.
func readProviders(config *apiserverconfig.EncryptionConfiguration) encryptionconfig.StaticTransformers {
	out := encryptionconfig.StaticTransformers{}
	for _, rc := range config.Resources {
		var names []string
		for _, p := range rc.Providers {
			names = append(names, providerKeys(p)...)
		}
		for _, resource := range rc.Resources {
			gr := schema.ParseGroupResource(resource)
			if _, seen := out[gr]; !seen && len(names) > 0 {
				out[gr] = providerName(strings.Join(names, ", "))
			}
		}
	}
	return out
}

// providerKeys are a provider's keys as its values' envelopes name them,
// in the order it tries them.
func providerKeys(p apiserverconfig.ProviderConfiguration) []string {
	var keys []apiserverconfig.Key
	var name string
	switch {
	case p.AESCBC != nil:
		name, keys = "aescbc", p.AESCBC.Keys
	case p.AESGCM != nil:
		name, keys = "aesgcm", p.AESGCM.Keys
	case p.Secretbox != nil:
		name, keys = "secretbox", p.Secretbox.Keys
	default:
		return []string{providerOf(p)}
	}
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, name+":v1:"+k.Name)
	}
	return out
}

// readEncryptionConfig decodes the config file into the server's internal
// type, defaults applied.
func readEncryptionConfig(path string) (*apiserverconfig.EncryptionConfiguration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(apiserverconfig.AddToScheme(scheme))
	utilruntime.Must(apiserverconfigv1.AddToScheme(scheme))
	obj, _, err := serializer.NewCodecFactory(scheme).UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		return nil, err
	}
	config, ok := obj.(*apiserverconfig.EncryptionConfiguration)
	if !ok {
		return nil, fmt.Errorf("%s is not an EncryptionConfiguration", path)
	}
	return config, nil
}

// writeProviders reads the config's resources in order; as in the server,
// the first provider listed for a resource (or wildcard) writes, and later
// entries for it only read.
func writeProviders(config *apiserverconfig.EncryptionConfiguration) encryptionconfig.StaticTransformers {
	out := encryptionconfig.StaticTransformers{}
	for _, rc := range config.Resources {
		if len(rc.Providers) == 0 {
			continue
		}
		for _, resource := range rc.Resources {
			gr := schema.ParseGroupResource(resource)
			if _, seen := out[gr]; !seen {
				out[gr] = providerName(providerOf(rc.Providers[0]))
			}
		}
	}
	return out
}

// providerOf is provider:version:key as the provider writes it in a value's
// envelope (k8s:enc:<provider>:<version>:<key>:), or identity.
func providerOf(p apiserverconfig.ProviderConfiguration) string {
	switch {
	case p.AESCBC != nil && len(p.AESCBC.Keys) > 0:
		return "aescbc:v1:" + p.AESCBC.Keys[0].Name
	case p.AESGCM != nil && len(p.AESGCM.Keys) > 0:
		return "aesgcm:v1:" + p.AESGCM.Keys[0].Name
	case p.Secretbox != nil && len(p.Secretbox.Keys) > 0:
		return "secretbox:v1:" + p.Secretbox.Keys[0].Name
	case p.KMS != nil:
		version := p.KMS.APIVersion
		if version == "" {
			version = "v1"
		}
		return "kms:" + version + ":" + p.KMS.Name
	}
	return "identity"
}

// providerName is a transformer that writes a provider's name: asked through
// the server's resource lookup, it says which provider the lookup picked.
type providerName string

func (p providerName) TransformFromStorage(context.Context, []byte, value.Context) ([]byte, bool, error) {
	return nil, false, fmt.Errorf("%s only names a provider", string(p))
}

func (p providerName) TransformToStorage(context.Context, []byte, value.Context) ([]byte, error) {
	return []byte(p), nil
}
