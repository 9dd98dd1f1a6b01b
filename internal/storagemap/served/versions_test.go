package served

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapiserver "k8s.io/apiserver/pkg/server"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	"k8s.io/kubernetes/pkg/kubeapiserver"
	appsrest "k8s.io/kubernetes/pkg/registry/apps/rest"

	"github.com/regctl/regctl/internal/handle"
	"github.com/regctl/regctl/internal/logs/logstest"
	"github.com/regctl/regctl/internal/storagemap/restoptions"
	"github.com/regctl/regctl/internal/storagemap/serverflags"
	"github.com/regctl/regctl/internal/storagemap/wiring"
)

func TestMain(m *testing.M) { logstest.Main(m) }

// appsProvider is what makes the apps group in kube-apiserver.
var appsProvider = wiring.Provider{Value: appsrest.StorageProvider{}, Method: "NewRESTStorage"}

// apps is the apps group as kube-apiserver's provider builds it, through
// the recording getter over the server's own storage factory with its
// default flags. Nothing dials etcd: no test here uses a store.
func apps(t *testing.T) (*genericapiserver.APIGroupInfo, *restoptions.Getter) {
	t.Helper()
	etcd := *serverflags.NewOptions().Server.Etcd
	etcd.StorageConfig.Transport.ServerList = []string{"https://etcd:2379"}
	enabled := serverstorage.NewResourceConfig()
	enabled.EnableVersions(appsv1.SchemeGroupVersion)
	factoryConfig := kubeapiserver.NewStorageFactoryConfig()
	factoryConfig.APIResourceConfig = enabled
	factory, err := factoryConfig.Complete(&etcd).New()
	if err != nil {
		t.Fatal(err)
	}
	getter := &restoptions.Getter{Delegate: etcd.CreateRESTOptionsGetter(factory, nil), MainServers: etcd.StorageConfig.Transport.ServerList,
		Encryption: func(schema.GroupResource) string { return "identity" }}
	info, err := appsProvider.Value.(appsrest.StorageProvider).NewRESTStorage(enabled, getter)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, stores := range info.VersionedResourcesStorageMap {
			for _, s := range stores {
				s.Destroy()
			}
		}
	})
	return &info, getter
}

func appsV1(t *testing.T) (Version, *genericapiserver.APIGroupInfo, *restoptions.Getter) {
	t.Helper()
	info, getter := apps(t)
	versions, err := VersionsOf(info, appsProvider)
	if err != nil {
		t.Fatal(err)
	}
	if len(versions) != 1 || versions[0].GV != appsv1.SchemeGroupVersion {
		t.Fatalf("apps is served at %v, want v1 alone", versions)
	}
	return versions[0], info, getter
}

func resource(rs []metav1.APIResource, name string) metav1.APIResource {
	i := slices.IndexFunc(rs, func(r metav1.APIResource) bool { return r.Name == name })
	if i < 0 {
		return metav1.APIResource{}
	}
	return rs[i]
}

// TestNamesAreReadAsTheInstallerReadsThem: a version's names come from its
// storage, without installing it (short names, categories, a singular for
// resources only, a subresource's own kind and its resource's scope), and
// are what the installer's discovery serves once it is installed.
func TestNamesAreReadAsTheInstallerReadsThem(t *testing.T) {
	v, info, _ := appsV1(t)
	if !v.Preferred || v.Root != "/apis" || v.Info != info || v.Resources != nil || v.Codec.Hub != (schema.GroupVersion{Group: "apps", Version: "__internal"}) {
		t.Errorf("apps/v1: preferred %v, root %q, resources %v, hub %v", v.Preferred, v.Root, v.Resources, v.Codec.Hub)
	}
	if !slices.IsSortedFunc(v.Names, func(a, b metav1.APIResource) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("names not sorted")
	}
	d := resource(v.Names, "deployments")
	if d.Kind != "Deployment" || !d.Namespaced || !slices.Equal(d.ShortNames, []string{"deploy"}) || !slices.Equal(d.Categories, []string{"all"}) || d.SingularName != "deployment" {
		t.Errorf("deployments: %+v", d)
	}
	scale := resource(v.Names, "deployments/scale")
	if scale.Group != "autoscaling" || scale.Version != "v1" || scale.Kind != "Scale" || !scale.Namespaced || scale.SingularName != "" {
		t.Errorf("deployments/scale: %+v, want autoscaling/v1 Scale, namespaced, no singular", scale)
	}

	in := NewInstaller(&Models{}, nil, nil)
	if err := in.Install(&v, nil); err != nil {
		t.Fatal(err)
	}
	if len(v.Resources) != len(v.Names) || v.Partial {
		t.Fatalf("discovery has %d paths, the names %d", len(v.Resources), len(v.Names))
	}
	for _, want := range v.Names {
		got := resource(v.Resources, want.Name)
		if got.Kind != want.Kind || got.Group != want.Group || got.Version != want.Version || got.Namespaced != want.Namespaced || got.SingularName != want.SingularName ||
			!slices.Equal(got.ShortNames, want.ShortNames) || !slices.Equal(got.Categories, want.Categories) || len(got.Verbs) == 0 {
			t.Errorf("%s: discovery %+v\nnames %+v", want.Name, got, want)
		}
	}
	if ws := in.Container.RegisteredWebServices(); len(ws) != 1 || ws[0].RootPath() != "/apis/apps/v1" {
		t.Errorf("the container serves %d web services, want /apis/apps/v1", len(ws))
	}
}

// TestAPartialInstallServesItsOwnResources: a command's resources and
// their subresources are installed apart, into a container of their own.
func TestAPartialInstallServesItsOwnResources(t *testing.T) {
	v, _, _ := appsV1(t)
	in := NewInstaller(&Models{}, nil, nil)
	if err := in.Install(&v, []string{"deployments"}); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for p := range v.Installed() {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	if !v.Partial || !slices.Equal(paths, []string{"deployments", "deployments/scale", "deployments/status"}) {
		t.Errorf("installed %v (partial %v), want deployments and its subresources", paths, v.Partial)
	}
	if ws := in.Container.RegisteredWebServices(); len(ws) != 0 {
		t.Errorf("a partial install went into the map's container")
	}
	cr := Version{GV: schema.GroupVersion{Group: "example.com", Version: "v1"}}
	if err := in.Install(&cr, nil); err != nil || cr.Resources != nil {
		t.Errorf("a custom resource version is installed: %v, %v", cr.Resources, err)
	}
}

// TestCodecs: a path serves its version's codec, unless it serves another
// group's kind (kube-apiserver's scheme converts that) or has its own.
func TestCodecs(t *testing.T) {
	v, _, _ := appsV1(t)
	if c := CodecFor(v, "deployments", resource(v.Names, "deployments")); c.Convertor != v.Info.Scheme || c.Hub.Group != "apps" {
		t.Errorf("deployments: hub %v", c.Hub)
	}
	if c := CodecFor(v, "deployments/scale", resource(v.Names, "deployments/scale")); c.Convertor != legacyscheme.Scheme || c.Hub != (schema.GroupVersion{Group: "autoscaling", Version: "__internal"}) {
		t.Errorf("deployments/scale: hub %v, want autoscaling's internal version", c.Hub)
	}
	own := handle.Codec{Hub: schema.GroupVersion{Group: "example.com", Version: "v1"}}
	v.Codecs = map[string]handle.Codec{"deployments": own}
	if c := CodecFor(v, "deployments", resource(v.Names, "deployments")); c.Hub != own.Hub {
		t.Errorf("a path's own codec: hub %v", c.Hub)
	}
}
