package versioncmd

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/regctl/regctl/internal/cli/clitest"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
)

// TestVersionNamesTheKubernetesItCarries: the Kubernetes version is the
// one the server's code was built from, in text and as data; a format it
// does not print is refused.
func TestVersionNamesTheKubernetesItCarries(t *testing.T) {
	kube := serverflags.KubernetesVersion()
	for _, format := range []string{"text", "json"} {
		o, err := clitest.Parse(t, New, 0, "-o", format)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		o.IO.Out = &out
		if err := o.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if format == "text" {
			if !strings.Contains(out.String(), kube) || !strings.Contains(out.String(), runtime.Version()) {
				t.Errorf("text %q: want Kubernetes %s and %s", out.String(), kube, runtime.Version())
			}
			continue
		}
		var info struct{ KubernetesVersion, GoVersion string }
		if err := json.NewDecoder(io.Reader(&out)).Decode(&info); err != nil || info.KubernetesVersion != kube || info.GoVersion != runtime.Version() {
			t.Errorf("json %q (%v): want kubernetesVersion %s, goVersion %s", out.String(), err, kube, runtime.Version())
		}
	}
	clitest.Refused(t, New, 0, "valid values are text|yaml|json", "-o", "wide")
	clitest.Refused(t, New, 0, `unknown command "now"`, "now")
}
