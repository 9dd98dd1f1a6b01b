//go:build k8s1.35

package main

// releaseVersion is the Kubernetes release this build carries, as the
// tests expect regctl to name it.
const releaseVersion = "v1.35.4"

// storageDataObjects is how many objects of upstream's storage data (but
// CRDs and APIServices) a default server serves, at least.
const storageDataObjects = 56

// repairDropsExternalNameIPs: before Kubernetes 1.36 the server's cluster IP
// repair loop deletes the IPAddress a Service gets when it changes from
// ExternalName, if it sees the IPAddress before the update (fixed upstream
// with a grace period, repairip.go).
const repairDropsExternalNameIPs = true
