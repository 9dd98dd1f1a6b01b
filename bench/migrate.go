package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/rest"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/etcdview"
	"github.com/regctl/regctl/internal/etcdview/embedded"
	"github.com/regctl/regctl/internal/logs"
	"github.com/regctl/regctl/internal/migrate"
	"github.com/regctl/regctl/internal/storagemap"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
)

// Targets of the migrate benchmark: regctl re-encrypts the secrets at least
// this many times faster than kubectl through a kube-apiserver, within this
// peak RSS, and that RSS is flat in the number of secrets.
const (
	migrateSpeedup = 5.0
	migrateRSSMiB  = 200
	migrateFlat    = 1.1
)

// Keys of the benchmark's encryption configs: the secrets are written with
// key1; the rotated config writes with key2 and still reads key1.
const (
	benchKey1 = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	benchKey2 = "ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA="
)

// migrateBench measures a key rotation: `regctl migrate secrets
// --encryption` of 2 KiB secrets written with the old key, with the
// rotated config, at a tenth of the count and at the count, next to the
// documented way through a running server, `kubectl get secrets -A -o json
// | kubectl replace -f -`, through a kube-apiserver on the same etcd with
// the same config. Before every run the secrets are put back as they were
// written, with the old key.
func migrateBench(dir, launcher, regctl string, n, secrets int) error {
	logs.Setup(0, io.Discard)
	kubectl, apiserverTest, kubectlSkipped := buildKubectlServer(dir)
	old, rotated := filepath.Join(dir, "old.yaml"), filepath.Join(dir, "rotated.yaml")
	if err := writeEncryptionConfig(old, "key1"); err != nil {
		return err
	}
	if err := writeEncryptionConfig(rotated, "key2", "key1"); err != nil {
		return err
	}
	progress("starting etcd")
	e, err := embedded.Start(nil)
	if err != nil {
		return err
	}
	defer e.Close()
	ctx := context.Background()
	progress(fmt.Sprintf("writing %d secrets of 2 KiB with key1", secrets))
	if err := seedSecrets(ctx, e.ClientURL, old, secrets); err != nil {
		return err
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{e.ClientURL}, DialTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer c.Close()
	written, err := rawValues(ctx, c, "/registry/secrets/")
	if err != nil {
		return err
	}
	fmt.Printf("%d secrets of 2 KiB in %d namespaces, encrypted with aescbc key1; the rotated config writes key2 and reads key1\n\n", secrets, len(benchNamespaces))

	// reset puts back the first count secrets as they were written, and
	// no others; check wants every one of them written with key2.
	reset := func(count int) func() error {
		return func() error {
			if _, err := c.Delete(ctx, "/registry/secrets/", clientv3.WithPrefix()); err != nil {
				return err
			}
			for i := 0; i < count; i += 128 {
				var ops []clientv3.Op
				for _, kv := range written[i:min(count, i+128)] {
					ops = append(ops, clientv3.OpPut(string(kv.Key), string(kv.Value)))
				}
				if _, err := c.Txn(ctx).Then(ops...).Commit(); err != nil {
					return err
				}
			}
			return nil
		}
	}
	check := func(count int) func() error {
		return func() error {
			values, err := rawValues(ctx, c, "/registry/secrets/")
			if err != nil {
				return err
			}
			if len(values) != count {
				return fmt.Errorf("%d secrets stored, want %d", len(values), count)
			}
			for _, kv := range values {
				if !bytes.HasPrefix(kv.Value, []byte("k8s:enc:aescbc:v1:key2:")) {
					return fmt.Errorf("%s is not encrypted with key2", kv.Key)
				}
			}
			return nil
		}
	}

	t := newTable(launcher, 64, true)
	t.header = "vs regctl"
	small := secrets / 10
	args := []string{"migrate", "secrets", "--encryption", "--etcd-servers=" + e.ClientURL, "--encryption-provider-config=" + rotated}
	few, err := t.add(command{name: fmt.Sprintf("regctl migrate (%d secrets)", small), bin: regctl, args: args, reset: reset(small), check: check(small)}, n, nil)
	if err != nil {
		return err
	}
	many, err := t.add(command{name: fmt.Sprintf("regctl migrate (%d secrets)", secrets), bin: regctl, args: args, reset: reset(secrets), check: check(secrets)}, n, func(stats) string { return "anchor" })
	if err != nil {
		return err
	}
	unbounded, err := t.add(command{name: fmt.Sprintf("regctl migrate --qps=0 (%d secrets)", secrets), bin: regctl, args: append(args, "--qps=0"), reset: reset(secrets), check: check(secrets)}, n,
		func(st stats) string { return fmt.Sprintf("%.2fx", ratio(st, many)) })
	if err != nil {
		return err
	}
	var viaServer stats
	if kubectlSkipped == nil {
		progress("starting kube-apiserver")
		kubeconfig := filepath.Join(dir, "kubeconfig-migrate")
		stop, err := startAPIServer(apiserverTest, e.ClientURL, kubeconfig, "--encryption-provider-config="+rotated)
		if err != nil {
			return err
		}
		defer stop()
		env := []string{"KUBECONFIG=" + kubeconfig, "HOME=" + filepath.Join(dir, "kubectl-home-migrate")}
		pipeline := fmt.Sprintf("%[1]s get secrets -A -o json | %[1]s replace -f - > /dev/null", kubectl)
		viaServer, kubectlSkipped = t.add(command{name: fmt.Sprintf("kubectl get -o json | kubectl replace -f - (%d secrets)", secrets), bin: "/bin/sh", args: []string{"-c", pipeline}, env: env, reset: reset(secrets), check: check(secrets)}, n,
			func(st stats) string { return fmt.Sprintf("%.2fx slower", ratio(st, many)) })
	}

	fmt.Println()
	fmt.Println("targets:")
	if kubectlSkipped != nil {
		fmt.Printf("kubectl skipped: %s\n", oneLine(kubectlSkipped))
	} else {
		speedup := ratio(viaServer, many)
		verdict(fmt.Sprintf("regctl migrate (--qps %d) is %.1fx faster than kubectl through kube-apiserver", migrate.DefaultQPS, speedup), fmt.Sprintf(">= %gx", migrateSpeedup), speedup >= migrateSpeedup)
		speedup = ratio(viaServer, unbounded)
		verdict(fmt.Sprintf("regctl migrate --qps=0 is %.1fx faster than kubectl through kube-apiserver", speedup), fmt.Sprintf(">= %gx", migrateSpeedup), speedup >= migrateSpeedup)
	}
	peak := max(few.mib(), many.mib(), unbounded.mib())
	verdict(fmt.Sprintf("peak RSS %.0f MiB", peak), fmt.Sprintf("<= %d MiB", migrateRSSMiB), peak <= migrateRSSMiB)
	verdict(fmt.Sprintf("peak RSS at %d secrets %.2fx that at %d", secrets, float64(many.peakRSS)/float64(few.peakRSS), small), fmt.Sprintf("<= %gx", migrateFlat), float64(many.peakRSS) <= migrateFlat*float64(few.peakRSS))
	return nil
}

// writeEncryptionConfig writes an EncryptionConfiguration that encrypts
// secrets with aescbc, with keys in order (the first writes), and reads
// plain values.
func writeEncryptionConfig(path string, keys ...string) error {
	var b strings.Builder
	b.WriteString("apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - aescbc:\n      keys:\n")
	for _, k := range keys {
		secret := benchKey1
		if k == "key2" {
			secret = benchKey2
		}
		fmt.Fprintf(&b, "      - {name: %s, secret: %s}\n", k, secret)
	}
	b.WriteString("  - identity: {}\n")
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

// seedSecrets writes n secrets of 2 KiB, spread over benchNamespaces,
// through kube-apiserver's secret store with the encryption config.
func seedSecrets(ctx context.Context, etcdURL, encryptionConfig string, n int) error {
	opts := serverflags.NewOptions()
	fs := pflag.NewFlagSet("seed", pflag.ContinueOnError)
	opts.AddFlags(fs)
	if err := fs.Parse([]string{"--etcd-servers=" + etcdURL, "--encryption-provider-config=" + encryptionConfig}); err != nil {
		return err
	}
	w, err := storagemap.Open(ctx, storagemap.Config{Options: opts, Timeout: 30 * time.Second})
	if err != nil {
		return err
	}
	defer w.Close()
	if err := seedNamespaces(w); err != nil {
		return err
	}
	creater := w.Map.Handles["secrets"].Storage.(rest.Creater)
	for i := range n {
		ns := benchNamespaces[i%len(benchNamespaces)]
		s := &api.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("secret-%06d", i), Namespace: ns},
			Type:       api.SecretTypeOpaque,
			Data:       map[string][]byte{"token": bytes.Repeat([]byte("x"), 2048)},
		}
		if _, err := creater.Create(inNamespace(ctx, "secrets", ns), s, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating secret %s: %w", s.Name, err)
		}
	}
	return nil
}

// rawValues reads every key and value under prefix.
func rawValues(ctx context.Context, c *clientv3.Client, prefix string) ([]*mvccpb.KeyValue, error) {
	var out []*mvccpb.KeyValue
	err := etcdview.Pages(ctx, c, prefix, prefix, 1000, false, func(kvs []*mvccpb.KeyValue) error {
		out = append(out, kvs...)
		return nil
	})
	return out, err
}
