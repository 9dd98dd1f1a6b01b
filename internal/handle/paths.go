package handle

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// Paths of the map that flows and commands name, as the map names them
// (RESOURCE.GROUP), made from the groups' own registration, not spelled
// out in each place that needs one.
var (
	// CRDsPath is the CustomResourceDefinitions' path: restore and migrate
	// read them first, why reads those being deleted.
	CRDsPath = apiextensionsv1.Resource("customresourcedefinitions").String()
	// APIServicesPath is the APIServices' path: why reads which are
	// unavailable.
	APIServicesPath = apiregistrationv1.Resource("apiservices").String()
)
