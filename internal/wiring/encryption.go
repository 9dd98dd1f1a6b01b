package wiring

import (
	"context"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	apiserverconfig "k8s.io/apiserver/pkg/apis/apiserver"
	apiserverconfigv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
	serveroptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/server/options/encryptionconfig"
	"k8s.io/apiserver/pkg/storage/value"
)

// encryption is what --encryption-provider-config says: the transformers the
// stores use, and for each resource the provider that writes its values.
type encryption struct {
	transformers value.ResourceTransformers
	writers      encryptionconfig.StaticTransformers
}

// loadEncryption loads the encryption config as the server does. The write
// provider of each resource is read from the configuration, never learnt by
// encrypting a probe: a KMS provider would call its plugin for that.
func loadEncryption(ctx context.Context, etcd *serveroptions.EtcdOptions) (*encryption, error) {
	path := etcd.EncryptionProviderConfigFilepath
	if path == "" {
		return &encryption{}, nil
	}
	enc, err := encryptionconfig.LoadEncryptionConfig(ctx, path, false, "regctl")
	if err != nil {
		return nil, fmt.Errorf("loading `--encryption-provider-config`: %w", err)
	}
	writers, err := writeProviders(path)
	if err != nil {
		return nil, fmt.Errorf("loading `--encryption-provider-config`: %w", err)
	}
	return &encryption{transformers: encryptionconfig.StaticTransformers(enc.Transformers), writers: writers}, nil
}

// writerOf names the provider that writes new values of a resource
// ("identity", "aescbc:v1:key1", "kms:v2:plugin"), in the envelope's words.
// The lookup (exact resource, then group/*, then */*) is the server's own:
// each candidate is a transformer that writes its provider's name.
func (e *encryption) writerOf(gr schema.GroupResource) string {
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

// writeProviders reads the config's resources in order; as in the server,
// the first provider listed for a resource (or wildcard) writes, and later
// entries for it only read.
func writeProviders(path string) (encryptionconfig.StaticTransformers, error) {
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
	return out, nil
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
