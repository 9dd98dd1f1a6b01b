package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/rest"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/regctl/regctl/internal/logs"
)

// plaintext measures what the check that refuses a Secret in plain text
// costs a write: it reads every stored Secret until one says the server
// encrypts them, so a cluster that encrypts nothing is its worst case. The
// same write with --allow-plaintext, which skips the check, is the anchor.
// Both are dry runs, so each run finds the same etcd.
func plaintext(dir, launcher, regctl string, n, secrets int) error {
	logs.Setup(0, io.Discard)
	ctx := context.Background()
	e, w, stop, err := startWithNamespaces(ctx)
	if err != nil {
		return err
	}
	defer stop()
	progress(fmt.Sprintf("writing %d secrets of 1 KiB in plain text", secrets))
	creater := w.Map.Handles["secrets"].Storage.(rest.Creater)
	for i := range secrets {
		ns := benchNamespaces[i%len(benchNamespaces)]
		s := &api.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("secret-%06d", i), Namespace: ns},
			Type:       api.SecretTypeOpaque,
			Data:       map[string][]byte{"token": []byte(strings.Repeat("x", 1024))},
		}
		sctx := inNamespace(context.Background(), "secrets", ns)
		if _, err := creater.Create(sctx, s, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating secret %d: %w", i, err)
		}
	}
	keys, size, err := storedSize(ctx, e.ClientURL, "/registry/secrets/")
	if err != nil {
		return err
	}
	fmt.Printf("%d secrets, %.1f MiB of values\n", keys, float64(size)/(1<<20))
	manifest := filepath.Join(dir, "secret.yaml")
	doc := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: new, namespace: %s}\nstringData: {token: x}\n", benchNamespaces[0])
	if err := os.WriteFile(manifest, []byte(doc), 0o644); err != nil {
		return err
	}
	t := newTable(launcher, 56, true)
	t.header = "vs --allow-plaintext"
	write := func(extra ...string) command {
		args := append([]string{"create", "-f", manifest, "--dry-run", "--etcd-servers=" + e.ClientURL}, extra...)
		return command{name: "regctl " + strings.Join(append([]string{"create --dry-run"}, extra...), " "), bin: regctl, args: args}
	}
	anchor, err := t.add(write("--allow-plaintext"), n, func(stats) string { return "anchor" })
	if err != nil {
		return err
	}
	_, err = t.add(write(), n, func(st stats) string { return fmt.Sprintf("%.2fx", ratio(st, anchor)) })
	return err
}
