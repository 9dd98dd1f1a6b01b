package served

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/regctl/regctl/internal/handle"
)

// GroupCodec is the codec of a built-in group's paths, as
// GenericAPIServer.getAPIGroupVersion fills the RequestScope from the
// group's APIGroupInfo.
func GroupCodec(info *genericapiserver.APIGroupInfo, group string) handle.Codec {
	return handle.Codec{
		Serializer:      info.NegotiatedSerializer,
		Convertor:       info.Scheme,
		UnsafeConvertor: runtime.UnsafeObjectConvertor(info.Scheme),
		Hub:             schema.GroupVersion{Group: group, Version: runtime.APIVersionInternal},
	}
}

// CodecFor is the codec of a path of v: the version's own, unless the path
// serves another group's kind (pods/eviction takes policy's Eviction,
// widgets/scale autoscaling's Scale), which kube-apiserver's scheme holds.
func CodecFor(v Version, installerPath string, r metav1.APIResource) handle.Codec {
	if c, ok := v.Codecs[installerPath]; ok {
		return c
	}
	if r.Group == v.GV.Group && v.Codec.Serializer != nil {
		return v.Codec
	}
	return handle.Codec{
		Serializer:      legacyscheme.Codecs,
		Convertor:       legacyscheme.Scheme,
		UnsafeConvertor: runtime.UnsafeObjectConvertor(legacyscheme.Scheme),
		Hub:             schema.GroupVersion{Group: r.Group, Version: runtime.APIVersionInternal},
	}
}
