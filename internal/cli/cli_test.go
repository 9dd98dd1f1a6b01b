package cli

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/regctl/regctl/internal/storagemap/serverflags"
)

// globalsFrom are the globals of a command run with --manifest file (and
// --manifest-root root when set), the manifest's server naming its
// encryption config as it is on its node.
func globalsFrom(t *testing.T, root string) (*Globals, *bytes.Buffer) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "kube-apiserver.yaml")
	manifest := `apiVersion: v1
kind: Pod
metadata: {name: kube-apiserver, namespace: kube-system}
spec:
  containers:
  - name: kube-apiserver
    image: registry.k8s.io/kube-apiserver:` + serverflags.KubernetesVersion() + `
    command: [kube-apiserver, --etcd-servers=https://10.0.0.1:2379, --encryption-provider-config=/etc/kubernetes/enc/enc.yaml]
`
	if err := os.WriteFile(file, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	g := &Globals{IO: IOStreams{Out: &bytes.Buffer{}, ErrOut: &errOut}, Server: serverflags.NewOptions(), Manifest: file, ManifestRoot: root}
	flags := pflag.NewFlagSet("regctl", pflag.ContinueOnError)
	g.Server.AddFlags(flags)
	if err := g.Server.ApplyManifest(flags, file, root); err != nil {
		t.Fatal(err)
	}
	return g, &errOut
}

// missing is the error reading path gives when it is not there, wrapped
// as a session wraps it.
func missing(path string) error {
	return errors.Join(errors.New("opening the session"), &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist})
}

// TestExplainSaysWhereAManifestsFilesAre: a file the manifest names is
// where it is on the server's node; the error says how to give regctl a
// copy, or that the copy given lacks it. Other errors pass unchanged.
func TestExplainSaysWhereAManifestsFilesAre(t *testing.T) {
	g, _ := globalsFrom(t, "")
	err := g.Explain(missing("/etc/kubernetes/enc/enc.yaml"))
	if !strings.Contains(err.Error(), "give `--manifest-root DIR`") || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no root: %v, want the way to give a copy of the node's files, wrapping the error", err)
	}
	for _, other := range []error{missing("/home/me/enc.yaml"), errors.New("etcd refused")} {
		if got := g.Explain(other); got != other {
			t.Errorf("%v: explained as %v, want it unchanged (not a file of the manifest)", other, got)
		}
	}

	root := t.TempDir()
	g, _ = globalsFrom(t, root)
	err = g.Explain(missing(filepath.Join(root, "etc/kubernetes/enc/enc.yaml")))
	if want := "`--manifest-root` " + root + " holds no copy of the node's /etc/kubernetes/enc/enc.yaml"; !strings.Contains(err.Error(), want) {
		t.Errorf("with a root: %v, want %q", err, want)
	}

	g.Manifest = ""
	if err := missing("/etc/kubernetes/enc/enc.yaml"); g.Explain(err) != err {
		t.Error("without a manifest an error is explained")
	}
}

// TestWarningsOnceNotesAsSaid: a session's warnings are said once per
// command however many sessions say them; notes each time, both on stderr.
func TestWarningsOnceNotesAsSaid(t *testing.T) {
	g, errOut := globalsFrom(t, "")
	cfg := g.SessionConfig()
	cfg.Warn("the cluster runs another release")
	g.SessionConfig().Warn("the cluster runs another release")
	cfg.Note("restored 2 objects")
	want := "warning: the cluster runs another release\nnote: restored 2 objects\n"
	if errOut.String() != want {
		t.Errorf("stderr %q, want %q", errOut.String(), want)
	}
	if g.IO.Out.(*bytes.Buffer).Len() != 0 {
		t.Error("a warning went to stdout")
	}
}
