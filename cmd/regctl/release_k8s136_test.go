//go:build k8s1.36

package main

// releaseVersion is the Kubernetes release this build carries, as the
// tests expect regctl to name it.
const releaseVersion = "v1.36.3"

// storageDataObjects is how many objects of upstream's storage data (but
// CRDs and APIServices) a default server serves, at least.
const storageDataObjects = 58

// repairDropsExternalNameIPs: before Kubernetes 1.36 the server's cluster IP
// repair loop deletes the IPAddress a Service gets when it changes from
// ExternalName, if it sees the IPAddress before the update (fixed upstream
// with a grace period, repairip.go).
const repairDropsExternalNameIPs = false
