package names

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	_ "unsafe" // for go:linkname

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/discovery/aggregated"
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app" // holds apiVersionPriorities
	controlplaneapiserver "k8s.io/kubernetes/pkg/controlplane/apiserver"

	"github.com/regctl/regctl/internal/storagemap/served"
)

// apiVersionPriorities is kube-apiserver's table of the priorities of its
// group versions, from which its aggregator registers an APIService for
// each, and which orders its discovery. The server keeps it in an
// unexported variable of its command package only; it is read from there,
// not copied.
//
//go:linkname apiVersionPriorities k8s.io/kubernetes/cmd/kube-apiserver/app.apiVersionPriorities
var apiVersionPriorities map[schema.GroupVersion]controlplaneapiserver.APIServicePriority

// discoveryMediaType asks the discovery handler for its aggregated document.
const discoveryMediaType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// discoveryRanks places each group version where the server's discovery
// lists it, as kubectl reads it: the core group (/api) first, then the
// groups of /apis as the server's aggregated discovery handler orders them
// by their priorities (highest first, then by name) and, in a group, the
// versions by theirs. The handler itself orders them here, given the
// server's priorities; group versions the table leaves out (custom
// resources') keep the handler's defaults, as on the server.
func discoveryRanks(versions []served.Version) (map[schema.GroupVersion]int, error) {
	rm := aggregated.NewResourceManager("apis")
	ranks := map[schema.GroupVersion]int{}
	for _, v := range versions {
		if v.GV.Group == "" {
			ranks[v.GV] = len(ranks)
			continue
		}
		rm.AddGroupVersion(v.GV.Group, apidiscoveryv2.APIVersionDiscovery{Version: v.GV.Version})
		if p, ok := apiVersionPriorities[v.GV]; ok {
			rm.SetGroupVersionPriority(metav1.GroupVersion{Group: v.GV.Group, Version: v.GV.Version}, int(p.Group), int(p.Version))
		}
	}
	req := httptest.NewRequest(http.MethodGet, "/apis", nil)
	req.Header.Set("Accept", discoveryMediaType)
	rec := httptest.NewRecorder()
	rm.ServeHTTP(rec, req)
	var doc apidiscoveryv2.APIGroupDiscoveryList
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); rec.Code != http.StatusOK || err != nil {
		return nil, fmt.Errorf("ordering the map's groups as the server's discovery does: %d %v", rec.Code, err)
	}
	for _, g := range doc.Items {
		for _, v := range g.Versions {
			ranks[schema.GroupVersion{Group: g.Name, Version: v.Version}] = len(ranks)
		}
	}
	return ranks, nil
}
