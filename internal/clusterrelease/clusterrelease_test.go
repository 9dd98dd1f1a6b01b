package clusterrelease

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/version"
)

func TestFromImageReadsTheTag(t *testing.T) {
	for image, want := range map[string]string{
		"registry.k8s.io/kube-apiserver:v1.37.2":                                             "1.37.2",
		"registry.k8s.io/kube-apiserver:v1.35.4@sha256:0123456789ab":                         "1.35.4",
		"602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/kube-apiserver:v1.36.3-eks-1-36-5": "1.36.3",
		"localhost:5000/kube-apiserver:v1.36.0":                                              "1.36.0",
		"localhost:5000/kube-apiserver":                                                      "",
		"registry.k8s.io/kube-apiserver":                                                     "",
		"registry.k8s.io/kube-apiserver:latest":                                              "",
		"":                                                                                   "",
	} {
		v, ok := FromImage(image)
		if got := ""; ok {
			got = v.String()
			if got != want {
				t.Errorf("FromImage(%q) = %s, want %q", image, got, want)
			}
		} else if want != "" {
			t.Errorf("FromImage(%q) read no version, want %s", image, want)
		}
	}
}

func TestJudge(t *testing.T) {
	build := version.MustParseGeneric("1.36.3")
	exact := func(v string) Source {
		return Source{What: "kubeadm-config's kubernetesVersion", Version: version.MustParseGeneric(v)}
	}
	kubelet := func(v string) Source {
		return Source{What: "node n1's kubelet", Version: version.MustParseGeneric(v), AtLeast: true}
	}
	for _, tc := range []struct {
		name     string
		emulated string
		sources  []Source
		want     string // the cluster's version, "" for no mismatch
		atLeast  bool
	}{
		{name: "nothing known"},
		{name: "the same minor, another patch", sources: []Source{exact("1.36.0")}},
		{name: "a newer release", sources: []Source{exact("1.37.2")}, want: "1.37.2"},
		{name: "an older release", sources: []Source{exact("1.35.4")}, want: "1.35.4"},
		{name: "the first exact source wins", sources: []Source{exact("1.37.2"), exact("1.36.3")}, want: "1.37.2"},
		{name: "an exact match outweighs kubelets", sources: []Source{kubelet("1.37.0"), exact("1.36.3")}},
		{name: "older kubelets say nothing", sources: []Source{kubelet("1.34.1"), kubelet("1.35.0")}},
		{name: "a newer kubelet is a lower bound", sources: []Source{kubelet("1.36.1"), kubelet("1.37.2")}, want: "1.37.2", atLeast: true},
		{name: "no version", sources: []Source{{What: "the apiserver manifest's image x"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := Judge(build, tc.emulated, tc.sources)
			switch {
			case tc.want == "" && m != nil:
				t.Fatalf("Judge = %+v, want no mismatch", m)
			case tc.want == "":
			case m == nil:
				t.Fatalf("Judge = nil, want a mismatch with %s", tc.want)
			case m.Cluster.String() != tc.want || m.AtLeast != tc.atLeast:
				t.Fatalf("Judge = %s (at least: %v), want %s (%v)", m.Cluster, m.AtLeast, tc.want, tc.atLeast)
			}
		})
	}
}

func TestMessagesNameTheBuildToUse(t *testing.T) {
	build := version.MustParseGeneric("1.36.3")
	newer := Judge(build, "", []Source{{What: "kubeadm-config's kubernetesVersion", Version: version.MustParseGeneric("1.37.2")}})
	older := Judge(build, "1.35", []Source{{What: "the apiserver manifest's image", Version: version.MustParseGeneric("1.35.4")}})
	bound := Judge(build, "", []Source{{What: "node n1's kubelet", Version: version.MustParseGeneric("1.37.1"), AtLeast: true}})
	for _, tc := range []struct {
		got  string
		want []string
	}{
		{newer.Warning("--x=ignore", false), []string{"this cluster runs Kubernetes 1.37.2 (kubeadm-config's kubernetesVersion)", "this regctl carries 1.36.3",
			"without the fields 1.37 added", "use the regctl for Kubernetes 1.37 (make build K8S=1.37)", "writes are refused unless `--x=ignore`"}},
		{newer.WriteError("--x=ignore").Error(), []string{"so it does not write", "or `--x=ignore` to write anyway"}},
		{older.Warning("--x=ignore", true), []string{"Kubernetes 1.35.4 (the apiserver manifest's image)", "it emulates 1.35 with 1.36's code", "regctl for Kubernetes 1.35"}},
		{bound.Warning("--x=ignore", false), []string{"this cluster runs Kubernetes 1.37 or newer (node n1's kubelet is 1.37.1)"}},
	} {
		for _, w := range tc.want {
			if !strings.Contains(tc.got, w) {
				t.Errorf("%q lacks %q", tc.got, w)
			}
		}
	}
	if w := older.Warning("--x=ignore", true); strings.Contains(w, "refused") {
		t.Errorf("with the override given, the warning still says writes are refused: %q", w)
	}
	if strings.Contains(older.Warning("--x=ignore", true), "\n") || newer.Newer() == older.Newer() {
		t.Errorf("warnings are one line; newer and older are told apart")
	}
}
