package agreement

import (
	"testing"

	"github.com/regctl/regctl/test/apiserver"
)

// TestRuntimeConfigOfTheCoreGroupAgreesWithKubeAPIServer names the core
// group in --runtime-config as its help allows (`v1=true`, `api/v1=true`,
// with a resource of another group off beside it): a kube-apiserver takes
// them, and serves what regctl's map holds.
func TestRuntimeConfigOfTheCoreGroupAgreesWithKubeAPIServer(t *testing.T) {
	t.Parallel()
	for _, value := range []string{"v1=true", "api/v1=true,batch/v1/cronjobs=false"} {
		t.Run(value, func(t *testing.T) {
			t.Parallel()
			flag := "--runtime-config=" + value
			server := apiserver.Start(t, flag)
			w := apiserver.Map(t, "--etcd-servers="+server.EtcdURL, flag)
			if _, ok := w.Map.Handles["pods"]; !ok {
				t.Error("no pods in the map")
			}
			discoveryAgrees(t, server.Client, w)
		})
	}
}
