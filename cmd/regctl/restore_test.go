package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/regctl/regctl/internal/cli"
	"github.com/regctl/regctl/internal/render"
)

// A CRD is restored before its custom resources, which are written once a
// map built after it serves them; none is written while the CRD now is
// being deleted, as the CRD handler refuses a create then.
func TestRestoreWritesCRDsBeforeTheirCustomResources(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sandbox := func(args ...string) (string, string, int) {
		return run(t, append([]string{"--data-dir", dir}, args...)...)
	}
	for _, name := range []string{"namespace", "crd", "widget"} {
		mustRun(t, "--data-dir", dir, "create", "-f", filepath.Join(examplesDir(t), name+".yaml"))
	}
	uid := mustRun(t, "--data-dir", dir, "get", "widgets/blue", "-n", "shop", "-o", "jsonpath={.metadata.uid}")
	rev := mustRun(t, "--data-dir", dir, "get", "widgets/blue", "-n", "shop", "-o", "jsonpath={.metadata.resourceVersion}")
	mustRun(t, "--data-dir", dir, "delete", "widgets/blue", "-n", "shop")
	// No controller finishes a deletion in a sandbox: the CRD waits on
	// its finalizer.
	mustRun(t, "--data-dir", dir, "delete", "crd/widgets.example.com")

	// A namespace the source does not hold: nothing matches, which is
	// said, not passed over.
	stdout, stderr, code := sandbox("restore", "--from", "rev:"+rev, "-n", "shp")
	if code != 1 || stdout != "" || stderr != "error: nothing to restore: rev:"+rev+" holds nothing that matches `-n shp`\n" {
		t.Errorf("a namespace the source does not hold: exit %d\n%s%s", code, stdout, stderr)
	}
	stdout, stderr, code = sandbox("restore", "--from", "rev:"+rev, "widgets", "-n", "shop")
	if code != 1 || stdout != "widget.example.com/blue skipped: its CRD widgets.example.com is being deleted: restore again once it is gone\n0 restored, 0 unchanged, 0 differ, 1 skipped from rev:"+rev+"\n" {
		t.Errorf("into a CRD being deleted: exit %d\n%s%s", code, stdout, stderr)
	}

	// The finalizer removed, as the CRD's controller would once its
	// objects are gone: the store then deletes the CRD.
	crd := mustRun(t, "--data-dir", dir, "get", "crd/widgets.example.com", "-o", "yaml")
	crd = strings.Replace(crd, "  - customresourcecleanup.apiextensions.k8s.io\n", "", 1)
	mustRun(t, "--data-dir", dir, "replace", "-f", writeFile(t, "crd.yaml", crd))
	if stdout, _, _ := sandbox("get", "crds", "-o", "name"); stdout != "" {
		t.Fatalf("the CRD is still there: %s", stdout)
	}

	stdout, stderr, code = sandbox("restore", "--from", "rev:"+rev, "-A", "--dry-run")
	if code != 0 || !strings.Contains(stdout, "customresourcedefinition.apiextensions.k8s.io/widgets.example.com restored (dry run)\n") ||
		!strings.Contains(stdout, "widget.example.com/blue restored (dry run) in shop namespace, once its CRD widgets.example.com is\n") {
		t.Errorf("dry run: exit %d\n%s%s", code, stdout, stderr)
	}
	stdout, stderr, code = sandbox("restore", "--from", "rev:"+rev, "-A")
	crdLine := strings.Index(stdout, "customresourcedefinition.apiextensions.k8s.io/widgets.example.com restored\n")
	widgetLine := strings.Index(stdout, "widget.example.com/blue restored in shop namespace\n")
	if code != 0 || crdLine < 0 || widgetLine < crdLine {
		t.Errorf("restore: exit %d\n%s%s", code, stdout, stderr)
	}
	if got := mustRun(t, "--data-dir", dir, "get", "widgets/blue", "-n", "shop", "-o", "jsonpath={.metadata.uid}"); got != uid {
		t.Errorf("blue came back with uid %s, was %s", got, uid)
	}
}

// Each way to ask for nothing that can be restored is one line and exit 1,
// before anything is read.
func TestRestoreRefusesWhatItCannotDo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-n", "shop"}, "error: `--from` names no source: give an etcd snapshot file, rev:TIME or rev:N\n"},
		{[]string{"--from", "live", "-n", "shop"}, "error: `--from live` is what is stored now: restore from a snapshot file, rev:TIME or rev:N\n"},
		{[]string{"--from", "rev:3"}, "error: name what to restore: TYPE[/NAME], `-n NAMESPACE` (the namespace and everything in it) or `-A` (everything)\n"},
		{[]string{"--from", "rev:3", "-n", "shop", "-A"}, "error: `-n` and `-A` both given: name one namespace, or all\n"},
		{[]string{"--from", "rev:0", "-A"}, "error: \"rev:0\" names no revision: rev:N takes a revision above 0, rev:TIME an RFC 3339 time (rev:2026-11-29T14:00:00Z) or an age (rev:90m)\n"},
		{[]string{"--from", "rev:3", "-A", "--snapshot", "backup.db"}, "error: backup.db is an etcd snapshot, which regctl only reads: write to a live etcd (`--etcd-servers`)\n"},
		{[]string{"--from", "rev:3", "-A", "--revision", "3"}, "error: `--revision` and restore: name the revision to restore from with `--from rev:N` or `--from rev:TIME`\n"},
		{[]string{"--from", "rev:3", "-A", "-o", "wide"}, "error: unknown output format \"wide\": valid values are table|json|yaml\n"},
	} {
		stdout, stderr, code := run(t, append([]string{"restore"}, tc.args...)...)
		if code != 1 || stdout != "" || stderr != tc.want {
			t.Errorf("restore %s: exit %d\n%s%s\nwant %s", strings.Join(tc.args, " "), code, stdout, stderr, tc.want)
		}
	}
}

// A backup encrypted with keys that are not today's is read with its own
// config, and what comes back is encrypted with today's first key.
func TestRestoreReadsABackupWithItsOwnKeys(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	then := "--encryption-provider-config=" + encryptionConfigFile(t, "then.yaml", map[string]string{"secrets": aescbc("key1") + identityProvider})
	now := "--encryption-provider-config=" + encryptionConfigFile(t, "now.yaml", map[string]string{"secrets": aescbc("key2") + identityProvider})
	secret := shopNamespace + "---\napiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: shop}\nstringData: {password: hunter2}\n"
	mustRun(t, "create", "-f", manifestFile(t, secret), s.flag(), then)
	backup := saveSnapshot(t, s.client)
	mustRun(t, "delete", "secrets/db", "-n", "shop", s.flag(), then)

	_, stderr, code := run(t, "restore", "--from", backup, "secrets", "-n", "shop", s.flag(), now)
	if code != 1 || !strings.Contains(stderr, "aescbc:v1:key1") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("without the backup's keys: exit %d\n%q", code, stderr)
	}
	stdout, stderr, code := run(t, "restore", "--from", backup, "secrets", "-n", "shop", s.flag(), now, strings.Replace(then, "--encryption-provider-config", "--from-encryption-provider-config", 1))
	if code != 0 || stdout != "secret/db restored\n1 restored, 0 unchanged, 0 differ, 0 skipped from "+backup+"\n" {
		t.Fatalf("with them: exit %d\n%s%s", code, stdout, stderr)
	}
	if raw := s.rawValue(t, "/registry/secrets/shop/db"); !strings.HasPrefix(string(raw), "k8s:enc:aescbc:v1:key2:") {
		t.Errorf("restored as %q, want today's key2", raw[:min(len(raw), 30)])
	}
}

// On a terminal, a restore says how far it is on one line of standard
// error, rewritten in place and cleared at the end; the report is on
// standard output alone.
func TestRestoreShowsProgressOnATerminal(t *testing.T) {
	t.Parallel()
	s := newLiveEtcd(t)
	manifest := shopNamespace
	for _, name := range []string{"a", "b", "c"} {
		manifest += "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: shop}\n"
	}
	mustRun(t, "create", "-f", manifestFile(t, manifest), s.flag())
	rev := s.revision(t)
	mustRun(t, "delete", "configmaps", "--all", "-n", "shop", s.flag())

	var out, errOut bytes.Buffer
	code := Run(context.Background(), cli.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: render.Terminal{Writer: &errOut}},
		[]string{"restore", "--from", "rev:" + strconv.FormatInt(rev, 10), "configmaps", "-n", "shop", s.flag()})
	if code != 0 || out.String() != "configmap/a restored\nconfigmap/b restored\nconfigmap/c restored\n3 restored, 0 unchanged, 0 differ, 0 skipped from rev:"+strconv.FormatInt(rev, 10)+"\n" {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	progress := strings.TrimPrefix(errOut.String(), "warning: regctl writes straight to etcd through the apiserver's stores: admission plugins (but for namespace lifecycle), webhooks and authorization do not run\n")
	if !strings.HasPrefix(progress, "\r\033[Krestoring: 3 of 3 objects written, ") || !strings.HasSuffix(progress, "\r\033[K") {
		t.Errorf("standard error on a terminal: %q", errOut.String())
	}
}

// A restore that brings a CRD back builds today's map again to write its
// custom resources, and what it writes after is still encrypted with
// today's first key, not with the keys the source is read with.
func TestRestoreAfterACRDWritesWithTodaysKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	then := "--encryption-provider-config=" + encryptionConfigFile(t, "then.yaml", map[string]string{"secrets": aescbc("key1") + identityProvider})
	now := "--encryption-provider-config=" + encryptionConfigFile(t, "now.yaml", map[string]string{"secrets": aescbc("key2") + identityProvider})
	for _, name := range []string{"namespace", "crd", "widget", "secret"} {
		mustRun(t, "--data-dir", dir, "create", "-f", filepath.Join(examplesDir(t), name+".yaml"), then)
	}
	rev := mustRun(t, "--data-dir", dir, "get", "secrets/db-password", "-n", "shop", "-o", "jsonpath={.metadata.resourceVersion}", then)
	mustRun(t, "--data-dir", dir, "delete", "secrets/db-password", "widgets/blue", "-n", "shop", then)
	mustRun(t, "--data-dir", dir, "delete", "crd/widgets.example.com")
	// The finalizer removed, as the CRD's controller would: the store then
	// deletes the CRD.
	crd := mustRun(t, "--data-dir", dir, "get", "crd/widgets.example.com", "-o", "yaml")
	crd = strings.Replace(crd, "  - customresourcecleanup.apiextensions.k8s.io\n", "", 1)
	mustRun(t, "--data-dir", dir, "replace", "-f", writeFile(t, "crd.yaml", crd))

	stdout, stderr, code := run(t, "--data-dir", dir, "restore", "--from", "rev:"+rev, "-A", now, strings.Replace(then, "--encryption-provider-config", "--from-encryption-provider-config", 1))
	if code != 0 || !strings.Contains(stdout, "customresourcedefinition.apiextensions.k8s.io/widgets.example.com restored\n") || !strings.Contains(stdout, "secret/db-password restored in shop namespace\n") {
		t.Fatalf("restore: exit %d\n%s%s", code, stdout, stderr)
	}
	if got := mustRun(t, "--data-dir", dir, "inspect", "secrets/db-password", "-n", "shop", now); !strings.Contains(got, "key2") || strings.Contains(got, "key1") {
		t.Errorf("the restored secret, read with today's keys:\n%s", got)
	}
}
